// The helper of the rules chaos loads into a JVM through the Byteman agent (the harness's JVM
// faults: runner/src/faults/kinds/jvm.rs writes the rules that call it). Each firing prints one
// line, `CHAOS-JVM {json}`, to the JVM's standard output: the node's log, which the run folder
// keeps (logs/NODE.log) and `reached: { jvm: ... }` counts. A held thread waits until the harness
// unloads the rule that holds it: Byteman then calls uninstalled(rule), which releases it.
package chaos.byteman;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.byteman.rule.Rule;
import org.jboss.byteman.rule.helper.Helper;

public class ChaosHelper extends Helper {
    /** Rules unloaded since they were last loaded: the threads they hold go on. */
    private static final Set<String> RELEASED = ConcurrentHashMap.newKeySet();
    /** Firings per rule, so that a line says which firing it is. */
    private static final ConcurrentHashMap<String, AtomicLong> FIRINGS = new ConcurrentHashMap<>();
    /** A held thread is let go after this long even if the harness never unloads its rule
     *  (a harness that died): ten minutes, longer than any scenario holds. */
    private static final long HOLD_AT_MOST_NANOS = 600_000_000_000L;

    protected ChaosHelper(Rule rule) {
        super(rule);
    }

    // Byteman's lifecycle hooks: a rule loaded again under the same name holds again. They take
    // the Rule: Byteman looks for that signature first, and would find Helper's own static
    // installed(Rule) (inherited) before a String one declared here.
    public static void installed(Rule rule) {
        RELEASED.remove(rule.getName());
    }

    public static void uninstalled(Rule rule) {
        RELEASED.add(rule.getName());
    }

    /** Waits `lo`..`hi` ms (drawn per firing). */
    public void chaosDelay(int lo, int hi) {
        long ms = hi > lo ? ThreadLocalRandom.current().nextLong(lo, (long) hi + 1) : lo;
        emit("delayed", "\"delay_ms\":" + ms);
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Records that the rule throws (the rule's own THROW follows). */
    public boolean chaosThrows() {
        emit("threw", null);
        return true;
    }

    /** Holds the calling thread until the harness unloads this rule. */
    public void chaosHold() {
        String name = rule.getName();
        emit("held", null);
        long start = System.nanoTime();
        boolean released = true;
        while (!RELEASED.contains(name)) {
            if (System.nanoTime() - start > HOLD_AT_MOST_NANOS) {
                released = false;
                break;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        long heldMs = (System.nanoTime() - start) / 1_000_000;
        emit(released ? "released" : "let-go", "\"held_ms\":" + heldMs);
    }

    public void chaosTrace() {
        traceValues("", new Object[0]);
    }

    public void chaosTrace(String names, Object a) {
        traceValues(names, new Object[] {a});
    }

    public void chaosTrace(String names, Object a, Object b) {
        traceValues(names, new Object[] {a, b});
    }

    public void chaosTrace(String names, Object a, Object b, Object c) {
        traceValues(names, new Object[] {a, b, c});
    }

    public void chaosTrace(String names, Object a, Object b, Object c, Object d) {
        traceValues(names, new Object[] {a, b, c, d});
    }

    /** `names` is the values' names joined by `;;` (what the scenario wrote: `$1`, `$0.x`;
     *  jvm.rs's VALUE_SEPARATOR). */
    private void traceValues(String names, Object[] values) {
        String[] keys = names.isEmpty() ? new String[0] : names.split(";;", -1);
        StringBuilder json = new StringBuilder("\"values\":{");
        for (int i = 0; i < values.length; i++) {
            if (i > 0) json.append(',');
            String key = i < keys.length ? keys[i] : "$" + i;
            json.append(quote(key)).append(':').append(quote(String.valueOf(values[i])));
        }
        json.append('}');
        emit("fired", json.toString());
    }

    private void emit(String event, String extra) {
        String name = rule.getName();
        long n = FIRINGS.computeIfAbsent(name, k -> new AtomicLong()).incrementAndGet();
        StringBuilder line = new StringBuilder("CHAOS-JVM {");
        line.append("\"rule\":").append(quote(name));
        line.append(",\"event\":").append(quote(event));
        line.append(",\"n\":").append(n);
        line.append(",\"thread\":").append(quote(Thread.currentThread().getName()));
        line.append(",\"ms\":").append(System.currentTimeMillis());
        if (extra != null) line.append(',').append(extra);
        line.append('}');
        System.out.println(line);
        System.out.flush();
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        int max = Math.min(s.length(), 2000);
        for (int i = 0; i < max; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                default:
                    if (c < 0x20 || c == 0x85 || c == 0x2028 || c == 0x2029) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        if (s.length() > max) out.append("...(").append(s.length()).append(" chars)");
        return out.append('"').toString();
    }
}

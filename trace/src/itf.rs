//! ITF, the Informal Trace Format (Apalache's ADR-015): `{"vars", "states", "loop"?}`, each
//! state `{"#meta"?, variable: value}`, values `{"#bigint": "..."}`, `{"#tup": [...]}`,
//! `{"#set": [...]}`, `{"#map": [[k, v], ...]}`, `{"#unserializable": "..."}`, and Quint's
//! variants `{"tag", "value"}`. Quint's `--mbt` adds to each state the action that led to it
//! (`mbt::actionTaken`) and the nondeterministic values it picked (`mbt::nondetPicks`, each a
//! Quint Option).

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::doc::Doc;
use crate::error::quoted;
use crate::json_path::At;
use crate::value::Value;
use crate::{Action, Format, Lasso, State, Step, Trace, TraceError};

const META: &str = "#meta";
const ACTION_TAKEN: &str = "mbt::actionTaken";
const NONDET_PICKS: &str = "mbt::nondetPicks";

pub(crate) fn read(doc: &Doc, json: &Json) -> Result<Trace, TraceError> {
    let root_at = At::ROOT;
    let root = doc.object(json, &root_at, "an ITF trace")?;
    let vars = variable_names(doc, root, &root_at)?;
    let states_at = root_at.key("states");
    let what = "the states: an array of {variable: value}";
    let entries = doc.array(
        doc.member(root, &root_at, "states", what)?,
        &states_at,
        what,
    )?;
    if entries.is_empty() {
        return Err(doc.error(
            &states_at,
            "expected at least the initial state; found none",
        ));
    }
    let lasso = match root.get("loop") {
        Some(json) => {
            let what = format!(
                "the index of the state the last one loops back to, 0 to {}",
                entries.len() - 1
            );
            let loop_at = root_at.key("loop");
            let to = doc.count(json, &loop_at, 0, &what)?;
            if to >= entries.len() {
                return Err(doc.expected(&loop_at, &what, json));
            }
            Some(Lasso { to, action: None })
        }
        None => None,
    };
    let mut states = Vec::with_capacity(entries.len());
    for (k, entry) in entries.iter().enumerate() {
        states.push(state(doc, entry, &states_at.index(k), &vars)?);
    }
    let mut states = states.into_iter();
    let (initial, _) = states.next().unwrap_or_default();
    let steps = states
        .map(|(state, action)| Step { action, state })
        .collect();
    Ok(Trace {
        format: Format::Itf,
        vars,
        initial,
        steps,
        lasso,
    })
}

/// `vars`, less Quint's `mbt::` fields, which say how a state was reached and are no variables.
fn variable_names(
    doc: &Doc,
    root: &crate::doc::Object,
    root_at: &At,
) -> Result<Vec<String>, TraceError> {
    let vars_at = root_at.key("vars");
    let what = "the variables' names (an array of strings)";
    let names = doc.array(doc.member(root, root_at, "vars", what)?, &vars_at, what)?;
    let mut vars = Vec::with_capacity(names.len());
    for (k, name) in names.iter().enumerate() {
        let name = doc.string(name, &vars_at.index(k), what)?;
        if !name.starts_with("mbt::") {
            vars.push(name.to_string());
        }
    }
    Ok(vars)
}

/// A state and the action that led to it (which the initial state's caller drops: Quint names
/// it `init`).
fn state(doc: &Doc, json: &Json, at: &At, vars: &[String]) -> Result<(State, Action), TraceError> {
    let record = doc.object(json, at, "a state: an object of {variable: value}")?;
    let mut state = State::new();
    let mut action = Action::default();
    for (key, json) in record {
        let key_at = at.key(key);
        match key.as_str() {
            META => {}
            ACTION_TAKEN => {
                let what = "the action's name (a string)";
                action.name = Some(doc.string(json, &key_at, what)?.to_string());
            }
            NONDET_PICKS => action.params = nondet_picks(doc, json, &key_at)?,
            _ => {
                state.insert(key.clone(), value(doc, json, &key_at)?);
            }
        }
    }
    if let Some(missing) = vars.iter().find(|var| !state.contains_key(*var)) {
        return Err(doc.error(
            at,
            format!(
                "expected variable {}, which `vars` lists; the state does not have it",
                quoted(missing)
            ),
        ));
    }
    Ok((state, action))
}

/// Quint's picks, each an Option: `Some` unwrapped, `None` (not picked in this step) left out.
fn nondet_picks(doc: &Doc, json: &Json, at: &At) -> Result<Vec<(String, Value)>, TraceError> {
    let what = "the nondeterministic picks: an object of {name: Some(value) or None}";
    let picks = doc.object(json, at, what)?;
    let mut params = Vec::with_capacity(picks.len());
    for (name, json) in picks {
        let pick_at = at.key(name);
        match value(doc, json, &pick_at)? {
            Value::Variant { tag, value } if tag == "Some" => params.push((name.clone(), *value)),
            Value::Variant { tag, .. } if tag == "None" => {}
            _ => return Err(doc.expected(
                &pick_at,
                "a Quint Option: {\"tag\": \"Some\", \"value\": ...} or {\"tag\": \"None\", ...}",
                json,
            )),
        }
    }
    params.sort_by(|(a, _), (b, _)| a.cmp(b));
    Ok(params)
}

fn value(doc: &Doc, json: &Json, at: &At) -> Result<Value, TraceError> {
    Ok(match json {
        Json::Null => return Err(doc.expected(at, "an ITF value (ITF writes no null)", json)),
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(_) => doc.integer(
            json,
            at,
            "an integer (larger ones are written {\"#bigint\": \"digits\"})",
        )?,
        Json::String(text) => Value::Str(text.clone()),
        Json::Array(items) => Value::List(values(doc, items, at)?),
        Json::Object(object) => {
            let mut keys = object.keys().filter(|key| *key != META);
            match (keys.next(), keys.next()) {
                (Some(key), None) if key.starts_with('#') => {
                    tagged(doc, key, &object[key.as_str()], &at.key(key))?
                }
                _ => record_or_variant(doc, object, at)?,
            }
        }
    })
}

fn values(doc: &Doc, items: &[Json], at: &At) -> Result<Vec<Value>, TraceError> {
    items
        .iter()
        .enumerate()
        .map(|(k, item)| value(doc, item, &at.index(k)))
        .collect()
}

/// `{"#bigint": ...}` and the other forms that ITF marks with a `#` key.
fn tagged(doc: &Doc, key: &str, json: &Json, at: &At) -> Result<Value, TraceError> {
    Ok(match key {
        "#bigint" => {
            let what = "an integer's decimal digits, optionally after a `-` (a string)";
            let digits = doc.string(json, at, what)?;
            Value::integer(digits).ok_or_else(|| doc.expected(at, what, json))?
        }
        "#tup" => Value::List(values(
            doc,
            doc.array(json, at, "a tuple's elements (an array)")?,
            at,
        )?),
        "#set" => Value::Set(values(
            doc,
            doc.array(json, at, "a set's elements (an array)")?,
            at,
        )?),
        "#map" => {
            let what = "a map's pairs: an array of [key, value]";
            let pairs = doc.array(json, at, what)?;
            let mut map = Vec::with_capacity(pairs.len());
            for (k, pair) in pairs.iter().enumerate() {
                let pair_at = at.index(k);
                let pair = doc.tuple(pair, &pair_at, 2, "a map's pair: [key, value]")?;
                map.push((
                    value(doc, &pair[0], &pair_at.index(0))?,
                    value(doc, &pair[1], &pair_at.index(1))?,
                ));
            }
            Value::Map(map)
        }
        "#unserializable" => Value::Unserializable(
            doc.string(
                json,
                at,
                "the text of a value the model checker could not write",
            )?
            .to_string(),
        ),
        _ => {
            return Err(doc.error(
                at,
                format!(
                    "expected one of ITF's forms #bigint, #tup, #set, #map or #unserializable; \
                     found {}",
                    quoted(key)
                ),
            ))
        }
    })
}

/// A record; exactly `tag` (a string) and `value` is a Quint variant.
fn record_or_variant(doc: &Doc, object: &crate::doc::Object, at: &At) -> Result<Value, TraceError> {
    let fields = object.iter().filter(|(key, _)| *key != META);
    if let (Some(Json::String(tag)), Some(inner), 2) = (
        object.get("tag"),
        object.get("value"),
        fields.clone().count(),
    ) {
        return Ok(Value::Variant {
            tag: tag.clone(),
            value: Box::new(value(doc, inner, &at.key("value"))?),
        });
    }
    let mut record = BTreeMap::new();
    for (name, json) in fields {
        if name.starts_with('#') {
            return Err(doc.error(
                &at.key(name),
                format!(
                    "expected a record's field; {} is ITF's mark of a value of its own, which \
                     has no other keys",
                    quoted(name)
                ),
            ));
        }
        record.insert(name.clone(), value(doc, json, &at.key(name))?);
    }
    Ok(Value::Record(record))
}

#[cfg(test)]
mod tests {
    use crate::{parse, ErrorKind, Value};

    fn error(text: &str) -> String {
        let error = parse(text, "cex.itf.json").unwrap_err();
        assert_eq!(error.kind, ErrorKind::WrongShape, "{error}");
        error.to_string()
    }

    #[test]
    fn quint_mbt_fields_name_the_action_and_its_picks() {
        let text = r##"{"vars": ["n", "mbt::actionTaken", "mbt::nondetPicks"], "states": [
  {"n": 0, "mbt::actionTaken": "init",
   "mbt::nondetPicks": {"c": {"tag": "None", "value": {"#tup": []}}}},
  {"n": {"#bigint": "1"}, "mbt::actionTaken": "send",
   "mbt::nondetPicks": {"c": {"tag": "Some", "value": {"#bigint": "2"}},
                        "b": {"tag": "Some", "value": {"tag": "Ok", "value": {"#tup": []}}},
                        "z": {"tag": "None", "value": {"#tup": []}}}}]}"##;
        let trace = parse(text, "cex.itf.json").unwrap();
        assert_eq!(trace.vars, ["n"]);
        assert_eq!(trace.initial.keys().collect::<Vec<_>>(), ["n"]);
        let [step] = trace.steps.as_slice() else {
            panic!("one step expected: {trace:?}");
        };
        assert_eq!(step.action.name.as_deref(), Some("send"));
        let ok = Value::Variant {
            tag: "Ok".into(),
            value: Box::new(Value::List(vec![])),
        };
        assert_eq!(
            step.action.params,
            [("b".to_string(), ok), ("c".to_string(), Value::Int(2))]
        );
        assert_eq!(step.state["n"], Value::Int(1));
    }

    #[test]
    fn a_pick_that_is_no_option() {
        let text = r##"{"vars": ["n"], "states": [{"n": 0},
  {"n": 1, "mbt::actionTaken": "send", "mbt::nondetPicks": {"c": 2}}]}"##;
        assert_eq!(
            error(text),
            "cex.itf.json:2:66: states[1].mbt::nondetPicks.c: expected a Quint Option: \
             {\"tag\": \"Some\", \"value\": ...} or {\"tag\": \"None\", ...}, found the number `2`"
        );
        let unnamed = r##"{"vars": ["n"], "states": [{"n": 0},
  {"n": 1, "mbt::actionTaken": 7}]}"##;
        assert_eq!(
            error(unnamed),
            "cex.itf.json:2:32: states[1].mbt::actionTaken: expected the action's name (a \
             string), found the number `7`"
        );
    }

    #[test]
    fn a_bigint_that_is_not_digits_and_an_unknown_form() {
        let text = r##"{"vars": ["n"], "states": [
  {"n": {"#bigint": "12x"}}]}"##;
        assert_eq!(
            error(text),
            "cex.itf.json:2:21: states[0].n.#bigint: expected an integer's decimal digits, \
             optionally after a `-` (a string), found the string `12x`"
        );
        let unknown = r##"{"vars": ["n"], "states": [
  {"n": {"#record": {}}}]}"##;
        assert_eq!(
            error(unknown),
            "cex.itf.json:2:21: states[0].n.#record: expected one of ITF's forms #bigint, #tup, \
             #set, #map or #unserializable; found `#record`"
        );
        let mixed = r##"{"vars": ["n"], "states": [{"n": {"#set": [], "a": 1}}]}"##;
        assert_eq!(
            error(mixed),
            "cex.itf.json:1:43: states[0].n.#set: expected a record's field; `#set` is ITF's \
             mark of a value of its own, which has no other keys"
        );
    }

    #[test]
    fn a_map_pair_that_is_not_a_pair() {
        let text = r##"{"vars": ["m"], "states": [
  {"m": {"#map": [[1, 2], [3, 4, 5]]}}]}"##;
        assert_eq!(
            error(text),
            "cex.itf.json:2:27: states[0].m.#map[1]: expected a map's pair: [key, value], found \
             an array of 3"
        );
    }

    #[test]
    fn a_state_without_a_listed_variable_no_states_and_a_loop_past_the_end() {
        let missing = r##"{"vars": ["n", "m"], "states": [
  {"n": 0, "m": 0},
  {"n": 1}]}"##;
        assert_eq!(
            error(missing),
            "cex.itf.json:3:3: states[1]: expected variable `m`, which `vars` lists; the state \
             does not have it"
        );
        let empty = r##"{"vars": [], "states": []}"##;
        assert_eq!(
            error(empty),
            "cex.itf.json:1:24: states: expected at least the initial state; found none"
        );
        let far = r##"{"vars": [], "states": [{}, {}], "loop": 2}"##;
        assert_eq!(
            error(far),
            "cex.itf.json:1:42: loop: expected the index of the state the last one loops back \
             to, 0 to 1, found the number `2`"
        );
        let varless = r##"{"states": [{}]}"##;
        assert_eq!(
            error(varless),
            "cex.itf.json:1:1: expected `vars` (the variables' names (an array of strings)); it \
             has key `states`"
        );
    }
}

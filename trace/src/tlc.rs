//! TLC's `-dumpTrace json`: `state` is a list of `[n, {variable: value}]`, each `action` is
//! `[[i, state], {"name", "location", "parameters"?, "context"?}, [j, state]]`. TLC writes the
//! counterexample's states and actions as TLA+ sets, so they are put in order by their numbers
//! here; the states inside an action repeat the numbered ones and are not read again.

use serde_json::Value as Json;

use crate::doc::Doc;
use crate::json_path::At;
use crate::value::Value;
use crate::{Action, Format, Lasso, SpecLocation, State, Step, Trace, TraceError};

pub(crate) fn read(doc: &Doc, json: &Json, shape: Format) -> Result<Trace, TraceError> {
    let root_at = At::ROOT;
    let counterexample_at = root_at.key("counterexample");
    let root = doc.object(json, &root_at, "a TLC trace")?;
    let (counterexample, at) = match shape {
        Format::Tlc => (
            doc.member(root, &root_at, "counterexample", "the counterexample")?,
            &counterexample_at,
        ),
        _ => (json, &root_at),
    };
    let counterexample = doc.object(
        counterexample,
        at,
        "the counterexample: an object with `action` and `state`",
    )?;
    let states = numbered_states(doc, counterexample, at)?;
    let (steps, lasso) = actions(doc, counterexample, at, &states)?;
    let mut states = states.into_iter();
    let initial = states.next().unwrap_or_default();
    let vars = match root.get("vars") {
        Some(vars) if shape == Format::Tlc => variable_names(doc, vars, &root_at.key("vars"))?,
        _ => initial.keys().cloned().collect(),
    };
    let steps = steps
        .into_iter()
        .zip(states)
        .map(|(action, state)| Step { action, state })
        .collect();
    Ok(Trace {
        format: shape,
        vars,
        initial,
        steps,
        lasso,
    })
}

fn variable_names(doc: &Doc, json: &Json, at: &At) -> Result<Vec<String>, TraceError> {
    let what = "the variables' names (an array of strings)";
    let names = doc.array(json, at, what)?;
    names
        .iter()
        .enumerate()
        .map(|(k, name)| Ok(doc.string(name, &at.index(k), what)?.to_string()))
        .collect()
}

/// The states in the order of their numbers, which must run from 1 without a gap.
fn numbered_states(
    doc: &Doc,
    counterexample: &crate::doc::Object,
    at: &At,
) -> Result<Vec<State>, TraceError> {
    let states_at = at.key("state");
    let what = "the states: an array of [n, {variable: value}]";
    let entries = doc.array(
        doc.member(counterexample, at, "state", what)?,
        &states_at,
        what,
    )?;
    if entries.is_empty() {
        return Err(doc.error(
            &states_at,
            "expected at least the initial state; found none",
        ));
    }
    let mut numbered = Vec::with_capacity(entries.len());
    for (k, entry) in entries.iter().enumerate() {
        let entry_at = states_at.index(k);
        let pair = doc.tuple(
            entry,
            &entry_at,
            2,
            "a numbered state: [n, {variable: value}]",
        )?;
        let number = doc.count(
            &pair[0],
            &entry_at.index(0),
            1,
            "the state's number (1, 2, ...)",
        )?;
        let state = state(doc, &pair[1], &entry_at.index(1))?;
        numbered.push((number, k, state));
    }
    numbered.sort_by_key(|(number, k, _)| (*number, *k));
    let count = numbered.len();
    let mut states = Vec::with_capacity(count);
    for (expected, (number, k, state)) in (1..).zip(numbered) {
        if number != expected {
            let number_at = states_at.index(k);
            let message = if number < expected {
                format!("state {number} appears twice")
            } else {
                format!("there is no state {expected}: the states are numbered 1 to {count}")
            };
            return Err(doc.error(&number_at.index(0), message));
        }
        states.push(state);
    }
    Ok(states)
}

/// The actions, one from each state to the next; an action from the last state back to an
/// earlier one (a liveness counterexample) is the lasso.
fn actions(
    doc: &Doc,
    counterexample: &crate::doc::Object,
    at: &At,
    states: &[State],
) -> Result<(Vec<Action>, Option<Lasso>), TraceError> {
    let actions_at = at.key("action");
    let what = "the actions: an array of [[i, state], {\"name\", \"location\"}, [j, state]]";
    let entries = doc.array(
        doc.member(counterexample, at, "action", what)?,
        &actions_at,
        what,
    )?;
    let last = states.len();
    let mut edges = Vec::with_capacity(entries.len());
    for (k, entry) in entries.iter().enumerate() {
        let entry_at = actions_at.index(k);
        let triple = doc.tuple(
            entry,
            &entry_at,
            3,
            "an action: [[i, state], {\"name\", \"location\"}, [j, state]]",
        )?;
        let from = endpoint(doc, &triple[0], &entry_at.index(0), last)?;
        let action = action(doc, &triple[1], &entry_at.index(1))?;
        let to = endpoint(doc, &triple[2], &entry_at.index(2), last)?;
        edges.push((from, k, to, action));
    }
    edges.sort_by_key(|(from, k, _, _)| (*from, *k));
    let mut steps = Vec::with_capacity(edges.len());
    let mut lasso = None;
    for (from, k, to, action) in edges {
        let entry_at = actions_at.index(k);
        let next = steps.len() + 1;
        if from == last && lasso.is_none() {
            lasso = Some(Lasso {
                to: to - 1,
                action: Some(action),
            });
        } else if from < next || from == last {
            return Err(doc.error(
                &entry_at.index(0),
                format!("a second action from state {from}: a counterexample is one path"),
            ));
        } else if from > next {
            return Err(missing_action(doc, &actions_at, next));
        } else if to != from + 1 {
            return Err(doc.error(
                &entry_at.index(2),
                format!(
                    "expected state {}: an action leads from a state to the next one (or from \
                     the last state, {last}, back to an earlier one); found state {to}",
                    from + 1
                ),
            ));
        } else {
            steps.push(action);
        }
    }
    if steps.len() + 1 < last {
        return Err(missing_action(doc, &actions_at, steps.len() + 1));
    }
    Ok((steps, lasso))
}

fn missing_action(doc: &Doc, actions_at: &At, from: usize) -> TraceError {
    doc.error(
        actions_at,
        format!(
            "expected an action from state {from} to state {}; there is none",
            from + 1
        ),
    )
}

/// The state number of `[n, state]` at either end of an action.
fn endpoint(doc: &Doc, json: &Json, at: &At, last: usize) -> Result<usize, TraceError> {
    let pair = doc.tuple(json, at, 2, "a numbered state: [n, {variable: value}]")?;
    let number_at = at.index(0);
    let number = doc.count(&pair[0], &number_at, 1, "the state's number (1, 2, ...)")?;
    if number > last {
        return Err(doc.error(
            &number_at,
            format!("expected one of the states' numbers, 1 to {last}; found {number}"),
        ));
    }
    Ok(number)
}

fn action(doc: &Doc, json: &Json, at: &At) -> Result<Action, TraceError> {
    let record = doc.object(json, at, "the action: an object with `name` and `location`")?;
    let name_what = "the action's name (a string)";
    let name = doc.string(
        doc.member(record, at, "name", name_what)?,
        &at.key("name"),
        name_what,
    )?;
    let location = match record.get("location") {
        Some(location) => Some(spec_location(doc, location, &at.key("location"))?),
        None => None,
    };
    let context_at = at.key("context");
    let context = match record.get("context") {
        Some(context) => {
            let what = "the action's context: an object of {name: value}";
            let entries = doc.object(context, &context_at, what)?;
            let mut values = Vec::with_capacity(entries.len());
            for (name, json) in entries {
                values.push((name.clone(), value(doc, json, &context_at.key(name))?));
            }
            values
        }
        None => Vec::new(),
    };
    let params = match record.get("parameters") {
        None => context,
        Some(parameters) => {
            let parameters_at = at.key("parameters");
            let what = "the action's parameters: an array of the names in its `context`";
            let names = doc.array(parameters, &parameters_at, what)?;
            let mut params = Vec::with_capacity(names.len());
            for (k, name) in names.iter().enumerate() {
                let name_at = parameters_at.index(k);
                let name = doc.string(name, &name_at, "a parameter's name (a string)")?;
                let Some((_, value)) = context.iter().find(|(known, _)| known == name) else {
                    return Err(doc.error(
                        &name_at,
                        format!(
                            "the action's `context` has no {}, which `parameters` names",
                            crate::error::quoted(name)
                        ),
                    ));
                };
                params.push((name.to_string(), value.clone()));
            }
            params
        }
    };
    Ok(Action {
        name: Some(name.to_string()),
        params,
        location,
    })
}

fn spec_location(doc: &Doc, json: &Json, at: &At) -> Result<SpecLocation, TraceError> {
    let record = doc.object(
        json,
        at,
        "the action's location: {beginLine, beginColumn, endLine, endColumn, module}",
    )?;
    let number = |key: &str| -> Result<usize, TraceError> {
        let what = "a line or column number";
        doc.count(doc.member(record, at, key, what)?, &at.key(key), 0, what)
    };
    let module_what = "the module's name (a string)";
    let module = doc.string(
        doc.member(record, at, "module", module_what)?,
        &at.key("module"),
        module_what,
    )?;
    Ok(SpecLocation {
        module: module.to_string(),
        begin_line: number("beginLine")?,
        begin_column: number("beginColumn")?,
        end_line: number("endLine")?,
        end_column: number("endColumn")?,
    })
}

fn state(doc: &Doc, json: &Json, at: &At) -> Result<State, TraceError> {
    let record = doc.object(json, at, "a state: an object of {variable: value}")?;
    let mut state = State::new();
    for (name, json) in record {
        state.insert(name.clone(), value(doc, json, &at.key(name))?);
    }
    Ok(state)
}

/// A TLC value: records and functions other than on 1..n are objects; tuples, sequences,
/// sets and functions on 1..n are arrays.
fn value(doc: &Doc, json: &Json, at: &At) -> Result<Value, TraceError> {
    Ok(match json {
        Json::Null => return Err(doc.expected(at, "a TLC value (TLC writes no null)", json)),
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(_) => doc.integer(json, at, "an integer (TLC's numbers are integers)")?,
        Json::String(text) => Value::Str(text.clone()),
        Json::Array(items) => Value::List(
            items
                .iter()
                .enumerate()
                .map(|(k, item)| value(doc, item, &at.index(k)))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(fields) => {
            let mut record = std::collections::BTreeMap::new();
            for (name, json) in fields {
                record.insert(name.clone(), value(doc, json, &at.key(name))?);
            }
            Value::Record(record)
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::{parse, ErrorKind, Value};

    fn error(text: &str) -> String {
        let error = parse(text, "cex.json").unwrap_err();
        assert_eq!(error.kind, ErrorKind::WrongShape, "{error}");
        error.to_string()
    }

    #[test]
    fn an_action_name_that_is_not_a_string() {
        let text = r#"{"counterexample": {
"state": [[1, {"x": 0}], [2, {"x": 1}]],
"action": [
[[1, {}], {"name": 3}, [2, {}]]
]}}"#;
        assert_eq!(
            error(text),
            "cex.json:4:20: counterexample.action[0][1].name: expected the action's name (a \
             string), found the number `3`"
        );
    }

    #[test]
    fn an_action_that_is_not_a_triple_or_lacks_its_name() {
        let text = r#"{"action": [[1, 2]],
  "state": [[1, {"x": 0}], [2, {"x": 1}]]}"#;
        assert_eq!(
            error(text),
            "cex.json:1:13: action[0]: expected an action: [[i, state], {\"name\", \
             \"location\"}, [j, state]], found an array of 2"
        );
        let nameless = r#"{"action": [[[1, {}], {"location": {}}, [2, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}]]}"#;
        assert_eq!(
            error(nameless),
            "cex.json:1:23: action[0][1]: expected `name` (the action's name (a string)); it \
             has key `location`"
        );
    }

    #[test]
    fn state_numbers_with_a_gap_or_twice() {
        let gap = r#"{"action": [],
  "state": [[1, {"x": 0}], [3, {"x": 1}]]}"#;
        assert_eq!(
            error(gap),
            "cex.json:2:29: state[1][0]: there is no state 2: the states are numbered 1 to 2"
        );
        let twice = r#"{"action": [],
  "state": [[1, {"x": 0}],
            [1, {"x": 1}]]}"#;
        assert_eq!(
            error(twice),
            "cex.json:3:14: state[1][0]: state 1 appears twice"
        );
        let zero = r#"{"action": [], "state": [[0, {"x": 0}]]}"#;
        assert_eq!(
            error(zero),
            "cex.json:1:27: state[0][0]: expected the state's number (1, 2, ...), found the \
             number `0`"
        );
    }

    #[test]
    fn actions_must_lead_from_each_state_to_the_next() {
        let missing = r#"{"counterexample": {"action": [[[1, {}], {"name": "A"}, [2, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}], [3, {"x": 2}]]}}"#;
        assert_eq!(
            error(missing),
            "cex.json:1:31: counterexample.action: expected an action from state 2 to state 3; \
             there is none"
        );
        let skipping = r#"{"action": [[[1, {}], {"name": "A"}, [3, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}], [3, {"x": 2}]]}"#;
        assert_eq!(
            error(skipping),
            "cex.json:1:38: action[0][2]: expected state 2: an action leads from a state to the \
             next one (or from the last state, 3, back to an earlier one); found state 3"
        );
        let twice = r#"{"action": [[[1, {}], {"name": "A"}, [2, {}]],
  [[1, {}], {"name": "B"}, [2, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}]]}"#;
        assert_eq!(
            error(twice),
            "cex.json:2:4: action[1][0]: a second action from state 1: a counterexample is one \
             path"
        );
        let unknown_state = r#"{"action": [[[1, {}], {"name": "A"}, [9, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}]]}"#;
        assert_eq!(
            error(unknown_state),
            "cex.json:1:39: action[0][2][0]: expected one of the states' numbers, 1 to 2; found 9"
        );
    }

    #[test]
    fn a_parameter_its_context_lacks() {
        let text = r#"{"action": [[[1, {}],
  {"name": "Elect", "parameters": ["n"], "context": {"m": 1}},
  [2, {}]]],
  "state": [[1, {"x": 0}], [2, {"x": 1}]]}"#;
        assert_eq!(
            error(text),
            "cex.json:2:36: action[0][1].parameters[0]: the action's `context` has no `n`, \
             which `parameters` names"
        );
    }

    #[test]
    fn the_counterexample_without_its_states() {
        let text = r#"{"counterexample": {"action": []}, "vars": []}"#;
        assert_eq!(
            error(text),
            "cex.json:1:20: counterexample: expected `state` (the states: an array of [n, \
             {variable: value}]); it has key `action`"
        );
        let none = r#"{"counterexample": {"action": [], "state": []}}"#;
        assert_eq!(
            error(none),
            "cex.json:1:44: counterexample.state: expected at least the initial state; found none"
        );
    }

    #[test]
    fn fractions_and_null_are_no_tlc_values() {
        let text = r#"{"action": [], "state": [[1, {"x": 1.5}]]}"#;
        assert_eq!(
            error(text),
            "cex.json:1:36: state[0][1].x: expected an integer (TLC's numbers are integers), \
             found the number `1.5`"
        );
        let exponent = r#"{"action": [], "state": [[1, {"x": 1e40}]]}"#;
        assert!(error(exponent).starts_with("cex.json:1:36: state[0][1].x: expected an integer"));
        let null = r#"{"action": [], "state": [[1, {"x": null}]]}"#;
        assert_eq!(
            error(null),
            "cex.json:1:36: state[0][1].x: expected a TLC value (TLC writes no null), found null"
        );
    }

    #[test]
    fn integers_past_u64_keep_every_digit() {
        let text = r#"{"action": [], "state": [[1, {
            "a": 123456789012345678901234567890,
            "b": -9223372036854775809,
            "c": [340282366920938463463374607431768211457]}]]}"#;
        let trace = parse(text, "cex.json").unwrap();
        assert_eq!(
            trace.initial["a"],
            Value::Int(123_456_789_012_345_678_901_234_567_890)
        );
        assert_eq!(trace.initial["b"], Value::Int(-9_223_372_036_854_775_809));
        assert_eq!(
            trace.initial["c"],
            Value::List(vec![Value::BigInt(
                "340282366920938463463374607431768211457".into()
            )])
        );
    }
}

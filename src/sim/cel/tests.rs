//! The subset's behaviour, case by case after cel-spec's conformance suites, plus refusals,
//! templates, references and a no-panic sweep over generated garbage.

use super::*;
use crate::sim::rng::Rng;
use serde_json::json;

fn run_with(src: &str, act: &Activation) -> Result<Value, EvalError> {
    let e = parse(src).unwrap_or_else(|d| panic!("{src}: {d}"));
    eval(&e, act)
}

fn ok(src: &str) -> Value {
    run_with(src, &Activation::new()).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn err(src: &str) -> String {
    match run_with(src, &Activation::new()) {
        Ok(v) => panic!("{src}: expected an error, got {v:?}"),
        Err(e) => e.message,
    }
}

fn refused(src: &str) -> String {
    match parse(src) {
        Ok(e) => panic!("{src}: expected a refusal, parsed {e:?}"),
        Err(d) => d.to_string(),
    }
}

fn j(v: serde_json::Value) -> Value {
    Value::from_json(&v).unwrap()
}

/// Each case is `(expression, expected value as JSON)`.
fn check_all(cases: &[(&str, serde_json::Value)]) {
    for (src, want) in cases {
        assert_eq!(ok(src), j(want.clone()), "{src}");
    }
}

fn check_errors(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        let got = err(src);
        assert!(got.contains(want), "{src}: got {got:?}, want {want:?}");
    }
}

fn kro_activation() -> Activation {
    let mut act = Activation::new();
    act.insert(
        "schema".into(),
        json!({"spec": {"name": "web", "replicas": 3, "image": "nginx:1.27",
                        "labels": {"team": "a"}, "ports": [80, 443], "ratio": 0.5}}),
    );
    act.insert(
        "deployment".into(),
        json!({"metadata": {"name": "web", "namespace": "default"},
               "status": {"availableReplicas": 2, "conditions": [
                   {"type": "Available", "status": "True"},
                   {"type": "Progressing", "status": "False"}]}}),
    );
    act
}

// --- basic, literals ---

#[test]
fn literals_evaluate_to_themselves() {
    check_all(&[
        ("0", json!(0)),
        ("-1", json!(-1)),
        ("0x2A", json!(42)),
        ("'hello'", json!("hello")),
        ("\"double quoted\"", json!("double quoted")),
        ("'''x''x'''", json!("x''x")),
        ("r'\\\\'", json!("\\\\")),
        ("'\\\\'", json!("\\")),
        ("'\\x41\\u00e9\\U0001F600\\101'", json!("Aé😀A")),
        ("'a\\tb\\n'", json!("a\tb\n")),
        ("true", json!(true)),
        ("null", json!(null)),
        ("[]", json!([])),
        ("[1, 'two', [3.5]]", json!([1, "two", [3.5]])),
        ("{'k': 'v', 'n': 1}", json!({"k": "v", "n": 1})),
        ("// a comment\n 7", json!(7)),
    ]);
    assert_eq!(ok("42u"), Value::Uint(42));
    assert_eq!(ok("1.5e3"), Value::Double(1500.0));
    assert_eq!(ok(".5"), Value::Double(0.5));
    assert_eq!(ok("-9223372036854775808"), Value::Int(i64::MIN));
    assert_eq!(ok("18446744073709551615u"), Value::Uint(u64::MAX));
}

#[test]
fn out_of_range_literals_are_refused_at_parse_time() {
    assert!(refused("9223372036854775808").contains("out of range"));
    assert!(refused("18446744073709551616u").contains("out of range"));
}

// --- logic ---

#[test]
fn and_or_are_commutative_with_respect_to_errors() {
    check_all(&[
        ("false && (1 / 0 == 1)", json!(false)),
        ("(1 / 0 == 1) && false", json!(false)),
        ("true || (1 / 0 == 1)", json!(true)),
        ("(1 / 0 == 1) || true", json!(true)),
        ("'a' && false", json!(false)),
        ("true && true", json!(true)),
        ("false || false", json!(false)),
        ("!false", json!(true)),
        ("!!true", json!(true)),
    ]);
    check_errors(&[
        ("true && (1 / 0 == 1)", "division by zero"),
        ("(1 / 0 == 1) || false", "division by zero"),
        ("'a' && true", "no such overload"),
        ("!1", "no such overload"),
    ]);
}

#[test]
fn conditional_evaluates_only_the_chosen_branch() {
    check_all(&[
        ("true ? 1 : 1 / 0", json!(1)),
        ("false ? 1 / 0 : 'b'", json!("b")),
        ("1 > 2 ? 'x' : 2 > 1 ? 'y' : 'z'", json!("y")),
    ]);
    check_errors(&[("1 ? 'a' : 'b'", "no such overload")]);
}

// --- comparisons ---

#[test]
fn equality_is_heterogeneous_across_numeric_types_and_false_across_others() {
    check_all(&[
        ("1 == 1.0", json!(true)),
        ("1u == 1", json!(true)),
        ("dyn(2) == 1u", json!(false)),
        ("1 == '1'", json!(false)),
        ("null == null", json!(true)),
        ("null == 0", json!(false)),
        ("[1, 2] == [1, 2.0]", json!(true)),
        ("[1, 2] == [2, 1]", json!(false)),
        ("{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", json!(true)),
        ("{'a': 1} == {'a': 2}", json!(false)),
        ("{1: 'x'} == {1u: 'x'}", json!(true)),
        ("'abc' != 'abd'", json!(true)),
        ("0.0 / 0.0 == 0.0 / 0.0", json!(false)),
        ("-0.0 == 0.0", json!(true)),
    ]);
}

#[test]
fn ordering_works_within_and_across_numeric_types() {
    check_all(&[
        ("1 < 2", json!(true)),
        ("2u <= 2u", json!(true)),
        ("1 < 1.5", json!(true)),
        ("2.5 > 2u", json!(true)),
        ("-1 < 0u", json!(true)),
        ("9223372036854775807 < 18446744073709551615u", json!(true)),
        ("'a' < 'b'", json!(true)),
        ("'abc' < 'abd'", json!(true)),
        ("'' < 'a'", json!(true)),
        ("false < true", json!(true)),
        ("1.0 / 0.0 > 1e308", json!(true)),
        ("0.0 / 0.0 < 1.0", json!(false)),
        ("0.0 / 0.0 >= 1.0", json!(false)),
    ]);
    check_errors(&[
        ("'a' < 1", "no such overload"),
        ("[1] < [2]", "no such overload"),
        ("null < null", "no such overload"),
    ]);
}

#[test]
fn in_tests_list_membership_and_map_keys() {
    check_all(&[
        ("2 in [1, 2, 3]", json!(true)),
        ("2.0 in [1, 2, 3]", json!(true)),
        ("'z' in ['a']", json!(false)),
        ("'a' in {'a': 1}", json!(true)),
        ("1 in {'a': 1}", json!(false)),
        ("1u in {1: 'x'}", json!(true)),
    ]);
    check_errors(&[("1 in 'abc'", "no such overload")]);
}

// --- integer and floating-point math ---

#[test]
fn integer_arithmetic_follows_cel() {
    check_all(&[
        ("1 + 2 * 3", json!(7)),
        ("(1 + 2) * 3", json!(9)),
        ("7 / 2", json!(3)),
        ("-7 / 2", json!(-3)),
        ("7 % 3", json!(1)),
        ("-7 % 3", json!(-1)),
        ("7 % -3", json!(1)),
        ("--5", json!(5)),
        ("-(-9223372036854775807)", json!(9223372036854775807i64)),
    ]);
    assert_eq!(ok("3u * 4u - 2u"), Value::Uint(10));
    assert_eq!(ok("7u / 2u"), Value::Uint(3));
}

#[test]
fn integer_overflow_is_an_error_not_a_wrap() {
    check_errors(&[
        ("9223372036854775807 + 1", "integer overflow"),
        ("-9223372036854775808 - 1", "integer overflow"),
        ("5000000000 * 5000000000", "integer overflow"),
        ("-(-9223372036854775808)", "integer overflow"),
        ("-9223372036854775808 / -1", "integer overflow"),
        ("-9223372036854775808 % -1", "integer overflow"),
        ("0u - 1u", "unsigned integer overflow"),
        ("18446744073709551615u + 1u", "unsigned integer overflow"),
    ]);
}

#[test]
fn integer_division_and_modulus_by_zero_are_errors() {
    check_errors(&[
        ("1 / 0", "division by zero"),
        ("1 % 0", "modulus by zero"),
        ("1u / 0u", "division by zero"),
        ("1u % 0u", "modulus by zero"),
    ]);
}

#[test]
fn mixed_numeric_arithmetic_has_no_overload() {
    check_errors(&[
        ("1 + 1.0", "no such overload: int + double"),
        ("1 + 1u", "no such overload: int + uint"),
        ("2.0 * 3", "no such overload"),
        ("1.5 % 1.0", "no such overload"),
        ("-1u", "no such overload"),
        ("'a' - 'b'", "no such overload"),
        ("true + true", "no such overload"),
    ]);
}

#[test]
fn floating_point_math_is_ieee() {
    assert_eq!(ok("1.5 + 2.25"), Value::Double(3.75));
    assert_eq!(ok("1.0 / 0.0"), Value::Double(f64::INFINITY));
    assert_eq!(ok("-1.0 / 0.0"), Value::Double(f64::NEG_INFINITY));
    assert_eq!(ok("2.0 * -0.5"), Value::Double(-1.0));
    assert_eq!(ok("-(2.5)"), Value::Double(-2.5));
    assert!(matches!(ok("0.0 / 0.0"), Value::Double(d) if d.is_nan()));
}

// --- strings ---

#[test]
fn string_concatenation_and_size_count_code_points() {
    check_all(&[
        ("'ab' + 'cd'", json!("abcd")),
        ("size('')", json!(0)),
        ("size('hello')", json!(5)),
        ("'héllo'.size()", json!(5)),
        ("size('😀')", json!(1)),
        ("size([1, 2])", json!(2)),
        ("{'a': 1}.size()", json!(1)),
    ]);
    check_errors(&[
        ("size(1)", "no such overload"),
        ("'a' + 1", "no such overload"),
    ]);
}

#[test]
fn string_functions_match_cel_go() {
    check_all(&[
        ("'foobar'.contains('oba')", json!(true)),
        ("'foobar'.contains('')", json!(true)),
        ("'foobar'.startsWith('foo')", json!(true)),
        ("'foobar'.endsWith('bar')", json!(true)),
        ("'foobar'.endsWith('foo')", json!(false)),
        ("'hubba'.matches('ub+a')", json!(true)),
        ("matches('abc', '^b')", json!(false)),
        ("'MiXeD ÄÖ'.lowerAscii()", json!("mixed ÄÖ")),
        ("'mixed äö'.upperAscii()", json!("MIXED äö")),
        ("'a,b,c'.split(',')", json!(["a", "b", "c"])),
        ("'a,b,c'.split(',', 2)", json!(["a", "b,c"])),
        ("'a,b,c'.split(',', 0)", json!([])),
        ("'abc'.split('')", json!(["a", "b", "c"])),
        ("''.split(',')", json!([""])),
        ("['a', 'b'].join()", json!("ab")),
        ("['a', 'b'].join('-')", json!("a-b")),
        ("[].join('-')", json!("")),
        ("'aaa'.replace('a', 'b')", json!("bbb")),
        ("'aaa'.replace('a', 'b', 2)", json!("bba")),
        ("'aaa'.replace('a', 'b', -1)", json!("bbb")),
        ("'  x y \\t'.trim()", json!("x y")),
        ("'tacocat'.substring(4)", json!("cat")),
        ("'tacocat'.substring(0, 4)", json!("taco")),
        ("'héllo'.substring(1, 3)", json!("él")),
        ("'tacocat'.indexOf('a')", json!(1)),
        ("'tacocat'.indexOf('a', 3)", json!(5)),
        ("'tacocat'.indexOf('')", json!(0)),
        ("'tacocat'.indexOf('x')", json!(-1)),
        ("'tacocat'.lastIndexOf('a')", json!(5)),
        ("'tacocat'.lastIndexOf('a', 4)", json!(1)),
        ("'tacocat'.lastIndexOf('at')", json!(5)),
        ("'héllo'.indexOf('l')", json!(2)),
        ("'hello'.charAt(1)", json!("e")),
        ("'hello'.charAt(5)", json!("")),
    ]);
    check_errors(&[
        ("'tacocat'.substring(40)", "index out of range: 40"),
        (
            "'tacocat'.substring(3, 1)",
            "invalid substring range. start: 3, end: 1",
        ),
        ("'abc'.indexOf('a', 9)", "index out of range: 9"),
        ("'abc'.charAt(-1)", "index out of range: -1"),
        ("[1, 2].join()", "no such overload"),
        ("'abc'.contains(1)", "no such overload"),
        ("'abc'.matches(dyn('('))", "error parsing regexp"),
    ]);
}

// --- lists and maps ---

#[test]
fn lists_index_concatenate_and_report_out_of_range() {
    check_all(&[
        ("[1, 2, 3][1]", json!(2)),
        ("[1, 2, 3][2u]", json!(3)),
        ("[1, 2, 3][0.0]", json!(1)),
        ("[1] + [2, 3]", json!([1, 2, 3])),
        ("[[1, 2], [3]][0][1]", json!(2)),
        ("size([] + [])", json!(0)),
    ]);
    check_errors(&[
        ("[1, 2][2]", "index '2' out of range in list size '2'"),
        ("[1, 2][-1]", "out of range"),
        ("[1]['a']", "unsupported index type 'string'"),
        ("[1][0.5]", "unsupported index type"),
    ]);
}

#[test]
fn maps_index_by_key_and_select_fields() {
    check_all(&[
        ("{'a': {'b': 1}}.a.b", json!(1)),
        ("{'a': 1}['a']", json!(1)),
        ("{1: 'one'}[1]", json!("one")),
        ("{1: 'one'}[1u]", json!("one")),
        ("{1: 'one'}[1.0]", json!("one")),
        ("{true: 'yes'}[true]", json!("yes")),
    ]);
    check_errors(&[
        ("{'a': 1}.b", "no such key: b"),
        ("{'a': 1}['b']", "no such key: b"),
        ("{'a': 1, 'a': 2}", "repeated key"),
        ("{1.5: 'x'}", "unsupported key type: double"),
        ("1.a", "does not support field selection"),
    ]);
}

#[test]
fn has_tests_field_presence_without_failing_on_absence() {
    check_all(&[
        ("has({'a': 1}.a)", json!(true)),
        ("has({'a': 1}.b)", json!(false)),
        ("has({'a': {'b': null}}.a.b)", json!(true)),
    ]);
    check_errors(&[("has({'a': 1}.x.y)", "no such key: x")]);
    assert!(refused("has(a)").contains("invalid argument to has() macro"));
}

// --- macros ---

#[test]
fn quantifier_macros_absorb_errors_when_the_result_is_decided() {
    check_all(&[
        ("[1, 2, 3].all(x, x > 0)", json!(true)),
        ("[1, 2, 3].all(x, x > 1)", json!(false)),
        ("[].all(x, x > 0)", json!(true)),
        ("[1, 2, 3].exists(x, x == 2)", json!(true)),
        ("[].exists(x, true)", json!(false)),
        ("[1, 2, 3].exists_one(x, x > 2)", json!(true)),
        ("[1, 2, 3].exists_one(x, x > 1)", json!(false)),
        ("[0, 1].all(x, 1 / x > 1)", json!(false)),
        ("[0, 1].exists(x, 1 / x == 1)", json!(true)),
        ("{'a': 1, 'b': 2}.all(k, k in ['a', 'b'])", json!(true)),
    ]);
    check_errors(&[
        ("[0, 1].all(x, 1 / x > 0)", "division by zero"),
        ("[0, 1].exists_one(x, 1 / x > 0)", "division by zero"),
        ("[1].all(x, x)", "no such overload"),
        ("1.all(x, true)", "no such overload"),
    ]);
}

#[test]
fn map_and_filter_macros_build_lists() {
    check_all(&[
        ("[1, 2, 3].map(x, x * 2)", json!([2, 4, 6])),
        ("[1, 2, 3].map(x, x > 1, x * 10)", json!([20, 30])),
        ("[1, 2, 3].filter(x, x % 2 == 1)", json!([1, 3])),
        ("{'a': 1, 'b': 2}.map(k, k + k)", json!(["aa", "bb"])),
        (
            "[[1], [2, 3]].map(l, l.map(x, x + 1))",
            json!([[2], [3, 4]]),
        ),
        ("[1, 2].map(x, [3].map(x, x))", json!([[3], [3]])),
    ]);
}

// --- conversions ---

#[test]
fn conversions_follow_cel_ranges_and_formats() {
    check_all(&[
        ("int(42u)", json!(42)),
        ("int(-123.456)", json!(-123)),
        ("int(1.9)", json!(1)),
        ("int('987')", json!(987)),
        ("int('-5')", json!(-5)),
        ("string(123)", json!("123")),
        ("string(-456)", json!("-456")),
        ("string(9876u)", json!("9876")),
        ("string(123.456)", json!("123.456")),
        ("string(-4.5e-3)", json!("-0.0045")),
        ("string(1.0)", json!("1")),
        ("string(1e6)", json!("1e+06")),
        ("string(1.5e-7)", json!("1.5e-07")),
        ("string(true)", json!("true")),
        ("string(123456.0)", json!("123456")),
        ("string(1234567.0)", json!("1.234567e+06")),
        ("string(0.0001)", json!("0.0001")),
        ("string(0.00001)", json!("1e-05")),
        ("string(1e100)", json!("1e+100")),
        ("string(0.1)", json!("0.1")),
        ("string(100.0)", json!("100")),
        ("string(120000.5)", json!("120000.5")),
        (
            "string(1.7976931348623157e308)",
            json!("1.7976931348623157e+308"),
        ),
        ("string(5e-324)", json!("5e-324")),
        ("string(-0.0)", json!("-0")),
        ("string(1.0 / 0.0)", json!("+Inf")),
        ("string('s')", json!("s")),
        ("bool('true')", json!(true)),
        ("bool('F')", json!(false)),
    ]);
    assert_eq!(ok("uint(1729)"), Value::Uint(1729));
    assert_eq!(ok("uint(3.14159265)"), Value::Uint(3));
    assert_eq!(ok("uint(1e19)"), Value::Uint(10_000_000_000_000_000_000));
    assert_eq!(ok("uint('300')"), Value::Uint(300));
    assert_eq!(ok("double(123u)"), Value::Double(123.0));
    assert_eq!(ok("double('-84.32e7')"), Value::Double(-8.432e8));
    assert_eq!(
        ok("double(9223372036854775807)"),
        Value::Double(i64::MAX as f64)
    );
    check_errors(&[
        ("int(18446744073709551615u)", "range error"),
        ("int(1e99)", "range error"),
        ("uint(-1)", "range error"),
        ("uint(6.022e23)", "range error"),
        ("uint(-0.5)", "range error converting -0.5 to uint"),
        ("int('1.5')", "type conversion error"),
        ("double('abc')", "type conversion error"),
        ("bool('yes')", "type conversion error"),
        ("string(null)", "no such overload"),
        ("string([1])", "no such overload"),
        ("int(null)", "no such overload"),
    ]);
}

// --- fields over an activation (kro's shapes) ---

#[test]
fn kro_expressions_read_the_activation() {
    let act = kro_activation();
    let cases = [
        ("schema.spec.name", json!("web")),
        ("schema.spec.replicas > 1 ? 'ha' : 'single'", json!("ha")),
        ("deployment.status.availableReplicas", json!(2)),
        (
            "deployment.status.availableReplicas == schema.spec.replicas",
            json!(false),
        ),
        ("schema.spec.name + '-svc'", json!("web-svc")),
        ("deployment.metadata.namespace", json!("default")),
        (
            "deployment.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')",
            json!(true),
        ),
        (
            "deployment.status.conditions.filter(c, c.status == 'True').map(c, c.type)",
            json!(["Available"]),
        ),
        (
            "schema.spec.ports.map(p, string(p)).join(',')",
            json!("80,443"),
        ),
        ("schema.spec.image.split(':')[1]", json!("1.27")),
        ("schema.spec.labels['team']", json!("a")),
        ("has(schema.spec.labels.team)", json!(true)),
        ("has(schema.spec.tolerations)", json!(false)),
        ("schema.spec.ratio * 2.0", json!(1.0)),
        ("{'app': schema.spec.name}", json!({"app": "web"})),
    ];
    for (src, want) in cases {
        assert_eq!(run_with(src, &act), Ok(j(want)), "{src}");
    }
    let missing = run_with("deployment.status.replicas", &act).unwrap_err();
    assert_eq!(missing.message, "no such key: replicas");
    let undeclared = run_with("service.spec", &act).unwrap_err();
    assert_eq!(undeclared.message, "undeclared reference to 'service'");
    let mixed = run_with("schema.spec.replicas * 1.5", &act).unwrap_err();
    assert!(mixed.message.contains("no such overload"), "{mixed}");
}

#[test]
fn values_round_trip_through_json() {
    let doc = json!({"i": -3, "big": 18446744073709551615u64, "d": 2.5, "whole": 2.0,
                     "s": "x", "b": true, "n": null, "l": [1, [2]], "m": {"k": {}}});
    let v = Value::from_json(&doc).unwrap();
    assert_eq!(v.to_json().unwrap(), doc);
    let Value::Map(m) = &v else { panic!() };
    assert_eq!(m[&Key::String("big".into())], Value::Uint(u64::MAX));
    assert_eq!(m[&Key::String("whole".into())], Value::Double(2.0));
    assert!(ok("1.0 / 0.0").to_json().is_err());
    assert_eq!(ok("{1: 'a'}").to_json().unwrap(), json!({"1": "a"}));
}

// --- refusals ---

#[test]
fn constructs_outside_the_subset_are_refused_with_positions() {
    let cases = [
        (
            "schema.x + random()",
            "1:12: function 'random' is not supported by this playground's CEL subset",
        ),
        (
            "base64.encode(schema.spec.name)",
            "1:1: function 'base64.encode' is not supported by this playground's CEL subset",
        ),
        (
            "'a'.\n  hash()",
            "2:3: function 'hash' is not supported by this playground's CEL subset",
        ),
        (
            "json(x)",
            "1:1: function 'json' is not supported by this playground's CEL subset",
        ),
        (
            "a?.b",
            "1:2: optional syntax '?.' is not supported by this playground's CEL subset",
        ),
        (
            "a.?b",
            "1:2: optional field selection '.?' is not supported by this playground's CEL subset",
        ),
        (
            "a[?0]",
            "1:2: optional index '[?' is not supported by this playground's CEL subset",
        ),
        (
            "{?'a': 1}",
            "1:2: optional entry '{?key: ...}' is not supported by this playground's CEL subset",
        ),
        (
            "x + b'abc'",
            "1:5: bytes literals are not supported by this playground's CEL subset",
        ),
        (
            "Pod{name: 'a'}",
            "1:4: message construction ('Type{field: ...}') is not supported by this playground's CEL subset",
        ),
        (
            "[1].sortBy(x, x)",
            "1:5: function 'sortBy' is not supported by this playground's CEL subset",
        ),
        (
            "type(1)",
            "1:1: function 'type' is not supported by this playground's CEL subset",
        ),
        (
            "l.transformList(i, v, v)",
            "1:3: function 'transformList' is not supported by this playground's CEL subset",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(refused(src), want, "{src}");
    }
    let d = parse("1 +\n  random()").unwrap_err();
    assert_eq!((d.offset, d.line, d.col), (6, 2, 3));
}

#[test]
fn syntax_errors_and_misuse_are_positioned() {
    let cases = [
        ("1 +", "1:4: unexpected end of expression"),
        ("(1", "1:3: expected ')', found end of expression"),
        ("1 2", "1:3: unexpected number 2"),
        ("'abc", "1:1: unterminated string literal"),
        ("a = b", "1:3: unexpected character '='"),
        ("'\\q'", "1:2: invalid escape sequence"),
        ("if", "1:1: reserved identifier: if"),
        (
            "'a'.contains()",
            "1:5: method 'contains' takes 1 argument(s), got 0",
        ),
        (
            "contains('a', 'b')",
            "1:1: function 'contains' is called on a receiver: write x.contains(...)",
        ),
        (
            "size(1, 2)",
            "1:1: function 'size' takes 1 argument(s), got 2",
        ),
        (
            "[1].all(1, true)",
            "1:9: the first argument of 'all' must be a variable name",
        ),
        (
            "[1].map(x)",
            "1:5: macro 'map' takes 2 or 3 arguments, got 1",
        ),
        (
            "'a'.matches('(')",
            "1:13: error parsing regexp: missing closing ): `(`",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(refused(src), want, "{src}");
    }
    // Reserved words still name fields, as in cel-go: kro reads metadata.namespace.
    assert!(parse("deployment.metadata.namespace").is_ok());
}

// --- bounds ---

#[test]
fn nesting_deeper_than_the_bound_is_refused_with_a_position() {
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    let d = parse(&deep).unwrap_err();
    assert!(d.message.contains("nested more than 64 levels"), "{d}");
    let chain = vec!["1"; 200].join(" + ");
    assert!(parse(&chain).unwrap_err().message.contains("nested"));
    let lists = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert!(parse(&lists).is_err());
    let nots = format!("{}true", "!".repeat(100));
    assert!(parse(&nots).is_err());
    // cel-spec asks for 32 levels and 32 repetitions.
    assert!(parse(&vec!["1"; 32].join(" + ")).is_ok());
    assert!(parse(&format!("{}1{}", "(".repeat(32), ")".repeat(32))).is_ok());
}

#[test]
fn evaluation_past_the_cost_limit_is_an_error_naming_the_limit() {
    let l = format!("[{}]", vec!["1"; 20].join(","));
    let src = format!("{l}.map(a, {l}.map(b, {l}.map(c, {l}.map(d, a + b + c + d))))");
    let e = parse(&src).unwrap();
    let got = eval(&e, &Activation::new()).unwrap_err();
    assert_eq!(
        got.message,
        "evaluation cost limit of 100000 steps exceeded"
    );
    let small = eval_with_limit(&parse("1 + 1").unwrap(), &Activation::new(), 2).unwrap_err();
    assert!(small.message.contains("limit of 2 steps"));
    // A decided && does not hide a blown budget, as it hides other errors.
    let e = parse("[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, true)) && false")
        .unwrap();
    let got = eval_with_limit(&e, &Activation::new(), 50).unwrap_err();
    assert!(got.message.contains("limit of 50 steps"), "{got}");
}

// --- references ---

#[test]
fn references_are_sorted_deduplicated_paths_without_bound_variables() {
    let e = parse(
        "deployment.status.availableReplicas > 0 && schema.spec.name != '' \
         && schema.spec.ports.all(p, p > schema.spec.min) && has(svc.spec.x) \
         && schema.spec.labels['team'] == schema.spec.name && items[i].name == ''",
    )
    .unwrap();
    let refs: Vec<String> = e.references().iter().map(|p| p.join(".")).collect();
    assert_eq!(
        refs,
        [
            "deployment.status.availableReplicas",
            "i",
            "items",
            "schema.spec.labels.team",
            "schema.spec.min",
            "schema.spec.name",
            "schema.spec.ports",
            "svc.spec.x",
        ]
    );
    assert!(parse("[1].map(x, x.y)").unwrap().references().is_empty());
}

// --- templates ---

#[test]
fn a_template_that_is_one_expression_keeps_its_type() {
    let act = kro_activation();
    let t = template::parse("${schema.spec.replicas}").unwrap();
    assert_eq!(t.eval(&act), Ok(Value::Int(3)));
    let t = template::parse("${schema.spec.ports}").unwrap();
    assert_eq!(t.eval(&act), Ok(j(json!([80, 443]))));
    let t = template::parse("plain text").unwrap();
    assert!(t.is_literal());
    assert_eq!(t.eval(&act), Ok(Value::string("plain text")));
}

#[test]
fn a_mixed_template_interpolates_string_forms() {
    let act = kro_activation();
    let cases = [
        ("${schema.spec.name}-svc", "web-svc"),
        (
            "${schema.spec.name}: ${schema.spec.replicas} x ${schema.spec.ratio} ${true}",
            "web: 3 x 0.5 true",
        ),
        ("a ${ {'k': '}'}['k'] } b", "a } b"),
        ("${'${'}", "${"),
        ("$ {x} and $x", "$ {x} and $x"),
    ];
    for (src, want) in cases {
        let t = template::parse(src).unwrap_or_else(|d| panic!("{src}: {d}"));
        assert_eq!(t.eval(&act), Ok(Value::string(want)), "{src}");
    }
    let t = template::parse("ports: ${schema.spec.ports}").unwrap();
    assert!(t
        .eval(&act)
        .unwrap_err()
        .message
        .contains("cannot be interpolated"));
    let t = template::parse("${schema.spec.name}${deployment.status.availableReplicas}").unwrap();
    assert_eq!(
        t.references(),
        vec![
            vec![
                "deployment".to_string(),
                "status".into(),
                "availableReplicas".into()
            ],
            vec!["schema".to_string(), "spec".into(), "name".into()],
        ]
    );
}

#[test]
fn template_diagnostics_are_positioned_in_the_whole_string() {
    let d = template::parse("name: ${schema.spec.name}\nhash: ${random()}").unwrap_err();
    assert_eq!(
        d.to_string(),
        "2:9: function 'random' is not supported by this playground's CEL subset"
    );
    assert_eq!(d.offset, 34);
    let d = template::parse("x ${schema.spec").unwrap_err();
    assert_eq!(
        d.to_string(),
        "1:3: unterminated '${': missing its closing '}'"
    );
    let d = template::parse("${}").unwrap_err();
    assert_eq!(d.to_string(), "1:3: unexpected end of expression");
}

// --- robustness ---

/// A random expression from a small grammar, `depth` levels deep at most.
fn random_expr(rng: &mut Rng, depth: u32) -> String {
    const LEAVES: &[&str] = &[
        "1",
        "-3",
        "0",
        "2u",
        "0u",
        "1.5",
        "-0.0",
        "'a'",
        "''",
        "'héllo'",
        "true",
        "null",
        "x",
        "x.y",
        "x.spec",
        "y",
        "schema.spec",
        "schema.spec.a",
        "[]",
        "{}",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615u",
        "1e308",
        "v",
    ];
    const BINARY: &[&str] = &[
        "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in",
    ];
    const METHODS: &[&str] = &[
        "size()",
        "contains('a')",
        "startsWith('')",
        "split(',')",
        "join('-')",
        "lowerAscii()",
        "substring(1)",
        "indexOf('l')",
        "charAt(0)",
        "replace('a', 'b')",
        "trim()",
        "matches('^a+$')",
        "all(v, v > 0)",
        "exists(v, v == 1)",
        "exists_one(v, true)",
        "map(v, v + v)",
        "filter(v, v != null)",
        "map(v, true, [v])",
    ];
    if depth == 0 || rng.chance(0.3) {
        return LEAVES[rng.range(0, LEAVES.len() as u64 - 1) as usize].to_string();
    }
    let mut sub = || random_expr(rng, depth - 1);
    let a = sub();
    let b = sub();
    match rng.range(0, 9) {
        0 | 1 => format!(
            "({a} {} {b})",
            BINARY[rng.range(0, BINARY.len() as u64 - 1) as usize]
        ),
        2 => format!(
            "{a}.{}",
            METHODS[rng.range(0, METHODS.len() as u64 - 1) as usize]
        ),
        3 => format!("[{a}, {b}]"),
        4 => format!("{{{a}: {b}}}"),
        5 => format!("{a}[{b}]"),
        6 => format!("({a} ? {b} : {a})"),
        7 => {
            let f = [
                "size", "int", "uint", "double", "string", "bool", "dyn", "has",
            ];
            let f = f[rng.range(0, f.len() as u64 - 1) as usize];
            format!("{f}({a})")
        }
        8 => format!("!{a}"),
        _ => format!("-{a}"),
    }
}

#[test]
fn random_expressions_evaluate_or_fail_without_panicking() {
    let mut rng = Rng::new(31);
    let mut act = Activation::new();
    act.insert("x".into(), json!({"y": [1, "a", {"z": null}], "spec": 2}));
    act.insert("schema".into(), json!({"spec": {"a": 1}}));
    act.insert("y".into(), json!("text"));
    let (mut parsed, mut evaluated) = (0, 0);
    for _ in 0..3000 {
        let mut src = random_expr(&mut rng, 5);
        if rng.chance(0.3) && !src.is_empty() {
            // Mutate: cut the text at a random char boundary.
            let cut = rng.range(0, src.len() as u64 - 1) as usize;
            let cut = (0..=cut)
                .rev()
                .find(|i| src.is_char_boundary(*i))
                .unwrap_or(0);
            src.truncate(cut);
        }
        if let Ok(e) = parse(&src) {
            parsed += 1;
            if eval(&e, &act).is_ok() {
                evaluated += 1;
            }
            let _ = e.references();
        }
        let _ = template::parse(&format!("a ${{{src}}} b")).map(|t| t.eval(&act));
    }
    assert!(
        parsed > 1500 && evaluated > 300,
        "{parsed} parsed, {evaluated} evaluated"
    );
}

#[test]
fn garbage_input_returns_errors_and_never_panics() {
    const ATOMS: &[&str] = &[
        "1",
        "0x",
        "1u",
        "1.5",
        "1e",
        ".",
        "..",
        "'",
        "\"",
        "'''",
        "r'",
        "b'",
        "\\",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "?",
        "?.",
        ".?",
        "!",
        "-",
        "+",
        "*",
        "/",
        "%",
        "<",
        "<=",
        "==",
        "!=",
        "&&",
        "||",
        " in ",
        "x",
        "y",
        "schema",
        ".spec",
        ".all(",
        ".map(",
        ".filter(",
        ".exists_one(",
        "has(",
        "size(",
        "int(",
        "uint(",
        "double(",
        "string(",
        "bool(",
        ".split(",
        ".join(",
        ".substring(",
        ".indexOf(",
        ".charAt(",
        ".matches(",
        "'a'",
        "'(['",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615u",
        "null",
        "true",
        "é",
        "😀",
        "\n",
        "//",
        "${",
        "$",
        "\\u",
        "\\x4",
        "0.0",
        "[1,2]",
        "{'k':1}",
        "x.y",
    ];
    let mut rng = Rng::new(30);
    let mut act = Activation::new();
    act.insert("x".into(), json!({"y": [1, "a", {"z": null}], "spec": 2}));
    act.insert("schema".into(), json!({"spec": {"a": 1}}));
    act.insert("y".into(), json!("text"));
    let mut parsed = 0;
    for _ in 0..4000 {
        let mut src = String::new();
        for _ in 0..rng.range(1, 14) {
            if rng.chance(0.1) {
                // Raw bytes as text: any char, including invalid-looking ones.
                src.push(char::from_u32(rng.range(0, 0x2FFF) as u32).unwrap_or('?'));
            } else {
                src.push_str(ATOMS[rng.range(0, ATOMS.len() as u64 - 1) as usize]);
            }
        }
        if let Ok(e) = parse(&src) {
            parsed += 1;
            let _ = eval(&e, &act);
            let _ = e.references();
        }
        if let Ok(t) = template::parse(&src) {
            let _ = t.eval(&act);
        }
    }
    // Some garbage must reach evaluation, not only the lexer.
    assert!(parsed > 50, "only {parsed} inputs parsed");
}

#[test]
fn evaluation_is_deterministic() {
    let act = kro_activation();
    let src = "{'b': 1, 'a': 2}.map(k, k) + deployment.status.conditions.map(c, c.type)";
    let first = run_with(src, &act);
    for _ in 0..3 {
        assert_eq!(run_with(src, &act), first);
    }
    assert_eq!(first, Ok(j(json!(["a", "b", "Available", "Progressing"]))));
}

#[test]
fn values_that_share_elements_cannot_blow_up_equality_joins_or_results() {
    let mut joined = "'abcdefghijklmnop'".to_string();
    for _ in 0..14 {
        joined = format!("[{joined}].map(v, [v, v, v, v].join())[0]");
    }
    let mut src = "1".to_string();
    for _ in 0..12 {
        src = format!("[{src}].map(v, [v, v, v, v, v, v, v, v, v, v])[0]");
    }
    let big = err(&src);
    assert!(big.contains("result too large"), "{big}");
    let eq = err(&format!("{src} == {src}"));
    assert!(eq.contains("cost limit"), "{eq}");
    let join = err(&joined);
    assert!(join.contains("cost limit"), "{join}");
    let replace = err("[1].map(a, 'ab'.replace('', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'))[0].replace('', 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy').replace('', 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz').replace('', 'wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww')");
    assert!(replace.contains("cost limit"), "{replace}");
}

#[test]
fn the_deepest_accepted_expressions_evaluate_within_a_small_stack() {
    // Shapes that recurse in the parser, the tree and the evaluator, each as deep as the bound
    // allows, on a thread with a wasm module's default stack (1 MiB) in an unoptimized build,
    // whose frames are larger than the release build's.
    let shapes: [fn(usize) -> String; 6] = [
        |n| format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        |n| format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        |n| format!("{}true", "!".repeat(n)),
        |n| format!("{}x{}", "[1].map(x, ".repeat(n), ")".repeat(n)),
        |n| vec!["1"; n].join(" + "),
        |n| format!("{}{}", "{'a': ".repeat(n), "1".to_string() + &"}".repeat(n)),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || {
            let mut deepest = Vec::new();
            for shape in shapes {
                let n = (1..=MAX_DEPTH + 2)
                    .take_while(|n| parse(&shape(*n)).is_ok())
                    .last()
                    .unwrap_or(0);
                let e = parse(&shape(n)).unwrap();
                let _ = eval(&e, &Activation::new());
                let _ = e.references();
                let _ = template::parse(&format!("${{{}}}", shape(n)));
                deepest.push(n);
            }
            deepest
        })
        .unwrap();
    let deepest = handle.join().expect("no stack overflow");
    assert!(deepest.iter().all(|n| *n >= 20), "{deepest:?}");
}

#[test]
fn macros_match_the_conformance_suite() {
    check_all(&[
        ("[1, 'foo', 3].exists(e, e != '1')", json!(true)),
        // Heterogeneous equality: comparing an int with a string is false, not an error.
        ("[1, 'foo', 3].exists(e, e == '10')", json!(false)),
        ("{'key1': 1, 'key2': 2}.exists(k, k == 'key2')", json!(true)),
        (
            "!{'key1': 1, 'key2': 2}.exists(k, k == 'key3')",
            json!(true),
        ),
        ("{'key': 1, 1: 21}.exists(k, k != 2)", json!(true)),
        ("[1, 'foo', 3].all(e, e == 1)", json!(false)),
        ("[1, 2, 3].all(e, 6 / (2 - e) == 6)", json!(false)),
        ("{'key1': 1, 'key2': 2}.all(k, k == 'key2')", json!(false)),
        ("[].exists_one(a, a == 7)", json!(false)),
        ("[6, 7, 8].exists_one(foo, foo % 5 == 2)", json!(true)),
        ("[0, 1, 2, 3, 4].exists_one(n, n % 2 == 1)", json!(false)),
        (
            "['foal', 'foo', 'four'].exists_one(n, n.startsWith('fo'))",
            json!(false),
        ),
        (
            "{6: 'six', 7: 'seven', 8: 'eight'}.exists_one(foo, foo % 5 == 2)",
            json!(true),
        ),
        ("[].map(n, n / 2)", json!([])),
        ("[2, 4, 6].map(n, n / 2)", json!([1, 2, 3])),
        ("{1: 1, 2: 4, 3: 9}.map(x, x * x)", json!([1, 4, 9])),
        ("[0, 1, 2, 3, 4].filter(x, x % 2 == 1)", json!([1, 3])),
        (
            "{0: 10, 1: 11, 2: 12, 3: 13, 4: 14}.filter(x, x % 2 == 1)",
            json!([1, 3]),
        ),
    ]);
    check_errors(&[
        ("[1, 2, 3].exists(e, e / 0 == 17)", "division by zero"),
        ("[1, 'foo', 3].all(e, e % 2 == 1)", "no such overload"),
        ("[1, 2, 3].all(e, e / 0 != 17)", "division by zero"),
        ("[3, 2, 1, 0].exists_one(n, 12 / n > 1)", "division by zero"),
        ("[2, 1, 0].map(n, 4 / n)", "division by zero"),
        ("[3, 2, 1, 0].filter(n, 12 / n > 4)", "division by zero"),
    ]);
}

#[test]
fn a_macro_variable_shadows_a_root_of_the_same_name_only_inside_the_macro() {
    let act = kro_activation();
    let src = "[1, 2].map(schema, schema * 10) + [schema.spec.replicas]";
    assert_eq!(run_with(src, &act), Ok(j(json!([10, 20, 3]))));
    let refs = parse(src).unwrap().references();
    assert_eq!(
        refs,
        vec![vec!["schema".to_string(), "spec".into(), "replicas".into()]]
    );
}

#[test]
fn evaluation_errors_point_at_the_node_that_failed() {
    let act = kro_activation();
    let src = "schema.spec.replicas > 1 &&\n  deployment.status.replicas > 0";
    let e = run_with(src, &act).unwrap_err();
    assert_eq!(
        e.to_diagnostic(src).to_string(),
        "2:21: no such key: replicas"
    );
    let e = run_with("1 + (2 / 0)", &act).unwrap_err();
    assert_eq!(e.offset, Some(7));
    let t = template::parse("name-${schema.spec.name}-${schema.spec.nope}").unwrap();
    let whole = "name-${schema.spec.name}-${schema.spec.nope}";
    let e = t.eval(&act).unwrap_err();
    assert_eq!(
        e.to_diagnostic(whole).to_string(),
        "1:40: no such key: nope"
    );
}

#[test]
fn string_extension_functions_match_the_conformance_suite() {
    let truths = [
        "'tacocat'.charAt(3) == 'o'",
        "'tacocat'.charAt(7) == ''",
        "'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'",
        "'tacocat'.indexOf('ac') == 1",
        "'tacocat'.indexOf('', 3) == 3",
        "'tacocat'.indexOf('at', 3) == 5",
        "'ta©o©αT'.indexOf('©') == 2",
        "'ta©o©αT'.indexOf('©', 3) == 4",
        "'ta©o©αT'.indexOf('©αT', 3) == 4",
        "'ta©o©αT'.indexOf('©α', 5) == -1",
        "'hello wello'.indexOf('ello', 6) == 7",
        "'hello wello'.indexOf('elbo room!!') == -1",
        "''.lastIndexOf('@@') == -1",
        "'tacocat'.lastIndexOf('') == 7",
        "'tacocat'.lastIndexOf('', 3) == 3",
        "'tacocat'.lastIndexOf('a', 3) == 1",
        "'ta©o©αT'.lastIndexOf('©') == 4",
        "'ta©o©αT'.lastIndexOf('©', 3) == 2",
        "'ta©o©αT'.lastIndexOf('©α', 4) == 4",
        "'hello wello'.lastIndexOf('ello', 6) == 1",
        "'hello wello'.lastIndexOf('hello wello') == 0",
        "'bananananana'.lastIndexOf('nana', 7) == 6",
        "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
        "'tacoCαt'.upperAscii() == 'TACOCαT'",
        "'12 days 12 hours'.replace('{0}', '2') == '12 days 12 hours'",
        "'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23') == '2 days 23 hours'",
        "'1 ©αT taco'.replace('αT', 'o©α') == '1 ©o©α taco'",
        "'hello world'.split(' ') == ['hello', 'world']",
        "'hello world events!'.split(' ', 0) == []",
        "'hello world events!'.split(' ', 1) == ['hello world events!']",
        "'o©o©o©o'.split('©', -1) == ['o', 'o', 'o', 'o']",
        "'tacocat'.substring(7) == ''",
        "'tacocat'.substring(4, 4) == ''",
        "'ta©o©αT'.substring(2, 6) == '©o©α'",
        "'ta©o©αT'.substring(7, 7) == ''",
        "' \\f\\n\\r\\t\\vtext  '.trim() == 'text'",
        "'\\u0085\\u00a0\\u1680text'.trim() == 'text'",
        "'text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009'.trim() == 'text'",
        "'\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000'.trim() == 'text'",
        "'\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff'.trim() == '\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff'",
        "['x', 'y'].join() == 'xy'",
        "[].join('-') == ''",
    ];
    for src in truths {
        assert_eq!(ok(src), Value::Bool(true), "{src}");
    }
    assert!(refused("strings.quote('a')").contains("function 'strings.quote' is not supported"));
    assert!(refused("'%s'.format(['a'])").contains("function 'format' is not supported"));
}

//! The JavaScript subset's behaviour: constructs and corner cases against what V8 answers,
//! refusals and errors with their positions, the sandbox's limits, and the example controller
//! against a fake host.

use super::*;
use serde_json::{json, Value as J};

/// A host that records every call and answers from a small store of objects.
#[derive(Default)]
struct FakeHost {
    calls: Vec<(String, String, Vec<J>)>,
    store: Vec<J>,
}

impl Host for FakeHost {
    fn call(&mut self, object: &str, method: &str, args: Vec<J>) -> Result<J, String> {
        self.calls
            .push((object.into(), method.into(), args.clone()));
        match method {
            "get" => {
                let found = self
                    .store
                    .iter()
                    .find(|o| o["kind"] == args[0] && o["metadata"]["name"] == args[1]);
                Ok(found.cloned().unwrap_or(J::Null))
            }
            "fail" => Err("the API server said no".into()),
            "controllerRef" => Ok(
                json!({"kind": args[0]["kind"], "name": args[0]["metadata"]["name"], "controller": true}),
            ),
            _ => Ok(J::Null),
        }
    }
}

fn run_prog(src: &str) -> Result<J, RunError> {
    let p = Program::parse(src).unwrap_or_else(|d| panic!("{src}\n{d}"));
    let mut i = Instance::start(&p, 7, Limits::default(), 1_700_000_000_000)?;
    i.call("main", vec![], &mut FakeHost::default(), 1_700_000_000_000)
}

fn prog(src: &str) -> J {
    run_prog(src).unwrap_or_else(|e| panic!("{src}\n{e}"))
}

fn expr(src: &str) -> J {
    prog(&format!("function main() {{ return (\n{src}\n); }}"))
}

/// Each case is `(expression, expected value as JSON)`.
fn check(cases: &[(&str, J)]) {
    for (src, want) in cases {
        assert_eq!(&expr(src), want, "{src}");
    }
}

/// Each case is `(program defining main, expected value as JSON)`.
fn check_progs(cases: &[(&str, J)]) {
    for (src, want) in cases {
        assert_eq!(&prog(src), want, "{src}");
    }
}

fn thrown(src: &str) -> String {
    match run_prog(src) {
        Ok(v) => panic!("{src}: expected an error, got {v}"),
        Err(e) => e.to_string(),
    }
}

fn refused(src: &str) -> Diagnostic {
    match Program::parse(src) {
        Ok(_) => panic!("{src}: expected a refusal"),
        Err(d) => d,
    }
}

#[test]
fn arithmetic_and_coercions_follow_javascript() {
    check(&[
        ("1 + 2 * 3", json!(7)),
        ("0.1 + 0.2", json!(0.30000000000000004)),
        ("String(0.1 + 0.2)", json!("0.30000000000000004")),
        ("[] + {}", json!("[object Object]")),
        ("[] + []", json!("")),
        ("[1, 2] + [3]", json!("1,23")),
        ("\"5\" * \"2\"", json!(10)),
        ("\"5\" + 2", json!("52")),
        ("\"5\" - 2", json!(3)),
        ("true + 1", json!(2)),
        ("null + 1", json!(1)),
        ("String(undefined + 1)", json!("NaN")),
        ("7 % -3", json!(1)),
        ("-7 % 3", json!(-1)),
        ("2 ** 10", json!(1024)),
        ("2 ** -1", json!(0.5)),
        ("1 / 0", json!(null)),
        ("String(1 / 0)", json!("Infinity")),
        ("String(-1 / 0)", json!("-Infinity")),
        ("Object.is === undefined", json!(true)),
        ("5 / 2", json!(2.5)),
        ("-(-3)", json!(3)),
        ("+\"  42  \"", json!(42)),
        ("String(+\"4x\")", json!("NaN")),
        ("+\"\"", json!(0)),
        ("+\"0x1f\"", json!(31)),
        ("String(+\"inf\")", json!("NaN")),
        ("~5", json!(-6)),
        ("5 & 3", json!(1)),
        ("5 | 3", json!(7)),
        ("5 ^ 3", json!(6)),
        ("1 << 31", json!(-2147483648)),
        ("-1 >>> 0", json!(4294967295u32)),
        ("-8 >> 1", json!(-4)),
        ("2 ** 32 | 0", json!(0)),
    ]);
}

#[test]
fn numbers_format_as_javascript_does() {
    check(&[
        ("String(1e21)", json!("1e+21")),
        ("String(1e20)", json!("100000000000000000000")),
        (
            "String(123456789012345680000)",
            json!("123456789012345680000"),
        ),
        ("String(1e-7)", json!("1e-7")),
        ("String(0.000001)", json!("0.000001")),
        ("String(1.5e-10)", json!("1.5e-10")),
        ("String(-0)", json!("0")),
        ("String(NaN)", json!("NaN")),
        ("String(100)", json!("100")),
        ("String(1.25)", json!("1.25")),
        ("String(-1.5e300)", json!("-1.5e+300")),
        ("String(2 ** 53)", json!("9007199254740992")),
        ("String(5e-324)", json!("5e-324")),
        ("String(0.1)", json!("0.1")),
        ("`${3.0}`", json!("3")),
        ("(1.005).toFixed(2)", json!("1.00")),
        ("(0.5).toFixed(0)", json!("1")),
        ("(2.5).toFixed(0)", json!("3")),
        ("(-1.5).toFixed(0)", json!("-2")),
        ("(-0.0001).toFixed(2)", json!("-0.00")),
        ("(99.995).toFixed(1)", json!("100.0")),
        ("(1234.5678).toFixed(2)", json!("1234.57")),
        ("(3).toFixed(2)", json!("3.00")),
        ("(255).toString(16)", json!("ff")),
        ("(-255).toString(2)", json!("-11111111")),
        ("Object.is", J::Null),
        ("1 / -0 < 0", json!(true)),
        ("JSON.stringify(-0)", json!("0")),
        (
            "JSON.stringify([NaN, Infinity, 1e21])",
            json!("[null,null,1e+21]"),
        ),
    ]);
}

#[test]
fn equality_typeof_and_truthiness_follow_javascript() {
    check(&[
        ("null == undefined", json!(true)),
        ("null === undefined", json!(false)),
        ("null == 0", json!(false)),
        ("\"1\" == 1", json!(true)),
        ("0 == \"\"", json!(true)),
        ("0 == \"0\"", json!(true)),
        ("\"\" == \"0\"", json!(false)),
        ("[1] == 1", json!(true)),
        ("[1,2] == \"1,2\"", json!(true)),
        ("true == 1", json!(true)),
        ("NaN == NaN", json!(false)),
        ("NaN !== NaN", json!(true)),
        ("({}) == ({})", json!(false)),
        ("typeof null", json!("object")),
        ("typeof undefined", json!("undefined")),
        ("typeof notDeclaredAnywhere", json!("undefined")),
        ("typeof 1", json!("number")),
        ("typeof \"\"", json!("string")),
        ("typeof (() => 1)", json!("function")),
        ("typeof Math.floor", json!("function")),
        ("typeof []", json!("object")),
        ("typeof class {}", json!("function")),
        ("!!\"\"", json!(false)),
        ("!!\"0\"", json!(true)),
        ("!![]", json!(true)),
        ("!!NaN", json!(false)),
        ("\"a\" < \"b\"", json!(true)),
        ("\"B\" < \"a\"", json!(true)),
        ("\"10\" < \"9\"", json!(true)),
        ("\"10\" < 9", json!(false)),
        ("undefined < 1", json!(false)),
        ("null >= 0", json!(true)),
        ("1 < 2 < 3", json!(true)),
        ("3 > 2 > 1", json!(false)),
    ]);
}

#[test]
fn logical_and_nullish_operators_short_circuit() {
    check(&[
        ("0 || \"x\"", json!("x")),
        ("0 ?? \"x\"", json!(0)),
        ("null ?? \"x\"", json!("x")),
        ("undefined ?? null ?? 3", json!(3)),
        ("1 && 2", json!(2)),
        ("\"\" && boom()", json!("")),
        ("1 || boom()", json!(1)),
        ("5 ?? boom()", json!(5)),
        ("true ? 1 : boom()", json!(1)),
        ("(1, 2, 3)", json!(3)),
        ("void 0", J::Null),
    ]);
}

#[test]
fn variables_scopes_and_closures_behave_as_in_javascript() {
    check_progs(&[
        ("function main() { let x = 1; { let x = 2; } return x; }", json!(1)),
        ("function main() { var x = 1; { var x = 2; } return x; }", json!(2)),
        ("function main() { if (false) { var y = 1; } return y; }", J::Null),
        ("function main() { return typeof hoisted; function hoisted() {} }", json!("function")),
        (
            "function main() { const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); return fs.map(f => f()); }",
            json!([0, 1, 2]),
        ),
        (
            "function counter() { let n = 0; return () => ++n; }\nfunction main() { const c = counter(); c(); c(); return c(); }",
            json!(3),
        ),
        ("let a = 1;\nfunction main() { a += 10; return a; }", json!(11)),
        ("function main() { let x; return x; }", J::Null),
        ("const x = 1;\nfunction main() { const read = () => x; const x = 2; return read(); }", json!(2)),
        ("function main() { try { return later; } catch (e) { return e.message; } let later = 1; }", json!("Cannot access 'later' before initialization")),
        ("let x = 1;\nfunction main() { try { { x; let x = 2; } } catch (e) { return e.name; } }", json!("ReferenceError")),
        ("function main() { try { new K(); } catch (e) { return e.message; } class K {} }", json!("Cannot access 'K' before initialization")),
        ("function main() { try { typeof t; } catch (e) { return e.name; } const t = 1; }", json!("ReferenceError")),
        ("function reconcile() { return passes; }\nlet passes = 3;\nfunction main() { return reconcile(); }", json!(3)),
        ("const add = (a, b = 10) => a + b;\nfunction main() { return [add(1), add(1, 2), add(1, undefined)]; }", json!([11, 3, 11])),
        ("function main() { const f = function fact(n) { return n <= 1 ? 1 : n * fact(n - 1); }; return f(5); }", json!(120)),
        ("function sum(...xs) { return xs.reduce((a, b) => a + b, 0); }\nfunction main() { return sum(1, 2, 3) + sum(); }", json!(6)),
        ("function f(a, b) { return [a, b]; }\nfunction main() { return f(...[1, 2]); }", json!([1, 2])),
        ("function main() { const o = { v: 2, get() { return this.v; } }; return o.get(); }", json!(2)),
        ("function main() { const o = { v: 2, f() { return [1].map(() => this.v); } }; return o.f(); }", json!([2])),
        ("function main() { let x = 5; x ||= 7; let y = 0; y ||= 7; let z = null; z ??= 8; let w = 1; w &&= 9; return [x, y, z, w]; }", json!([5, 7, 8, 9])),
        ("function main() { let i = 0; const a = i++; const b = ++i; return [a, b, i--, i]; }", json!([0, 2, 2, 1])),
        ("function main() { const a = [0, 0]; let i = 0; a[i++] += 5; a[i++]++; return [a, i]; }", json!([[5, 1], 2])),
        ("function main() { let n = 0; const o = {}; const k = () => (n++, \"x\"); o[k()] ??= 1; o[k()] ||= 2; o[k()] &&= 3; return [o, n]; }", json!([{"x": 3}, 3])),
        ("function main() { const counts = {}; for (const w of [\"a\", \"b\", \"a\"]) counts[w] = (counts[w] ?? 0) + 1; return counts; }", json!({"a": 2, "b": 1})),
        ("function main() { const e = new Error(\"m\"); e.code = 7; return [Object.keys(e), {...e}, JSON.stringify(e)]; }", json!([["code"], {"code": 7}, "{\"code\":7}"])),
    ]);
}

#[test]
fn functions_templates_and_operators_in_less_common_shapes_work() {
    check_progs(&[
        ("function main() { const f = (a, b = a * 2) => { const c = a + b; return c; }; return f(3); }", json!(9)),
        ("function main() { const x = 2; return `outer ${`inner ${x * 2}`} ${\"}\"} end`; }", json!("outer inner 4 } end")),
        ("function main() { let i = 4; const r = i++ / 2; return [r, i]; }", json!([2, 5])),
        ("function main() { const o = {n: 1, inc() { this.n++; return this; }}; return o.inc().inc().n; }", json!(3)),
        ("function main() { const fs = {add: (a, b) => a + b}; return fs[\"add\"](...[1, 2]); }", json!(3)),
        ("function main() { function inner() { return typeof this; } return inner(); }", json!("undefined")),
        ("var top = 1;\nfunction main() { return top + (typeof later) + later; }\nvar later = \"!\";", json!("1string!")),
        ("function main() { const {a: {b: [, second] = []} = {}} = {a: {b: [1, 2]}}; return second; }", json!(2)),
        ("function main() { return [1, 2, 3].map((x, i, arr) => x * arr.length + i); }", json!([3, 7, 11])),
        ("function main() { return [0.1 * 3, 1e21 + 1, 2 ** 53 + 1, -7 / 2 | 0]; }", json!([0.30000000000000004, 1e21, 9007199254740992u64, -3])),
        ("function main() { const a = \"x\"; return {[a]: 1, [`${a}y`]: 2, [1 + 1]: 3}; }", json!({"x": 1, "xy": 2, "2": 3})),
    ]);
    assert!(refused("x = tag`a`;")
        .message
        .contains("tagged templates are not supported"));
}

#[test]
fn control_flow_statements_work() {
    check_progs(&[
        ("function main() { let s = 0; for (let i = 0; i < 10; i++) { if (i % 2) continue; if (i > 6) break; s += i; } return s; }", json!(12)),
        ("function main() { let n = 0; while (n < 5) n++; return n; }", json!(5)),
        ("function main() { let n = 0; do { n++; } while (n < 0); return n; }", json!(1)),
        ("function main() { const out = []; for (const x of [1, 2, 3]) out.push(x * 2); return out; }", json!([2, 4, 6])),
        ("function main() { const out = []; for (const c of \"héj\") out.push(c); return out; }", json!(["h", "é", "j"])),
        ("function main() { const out = []; for (const k in {b: 1, a: 2, 1: 3, 0: 4}) out.push(k); return out; }", json!(["0", "1", "b", "a"])),
        ("function main() { const out = []; for (const i in [7, 8]) out.push(i); return out; }", json!(["0", "1"])),
        ("function main() { const m = new Map([[\"a\", 1], [\"b\", 2]]); const out = []; for (const [k, v] of m) out.push(k + v); return out; }", json!(["a1", "b2"])),
        ("function main() { const out = []; for (const v of new Set([3, 1, 3])) out.push(v); return out; }", json!([3, 1])),
        ("function main() { outer: for (let i = 0; i < 3; i++) { for (let j = 0; j < 3; j++) { if (j == 1) continue outer; if (i == 2) break outer; } } return 1; }", json!(1)),
        ("function main() { const r = []; outer: for (const i of [1,2,3]) { for (const j of [1,2,3]) { if (j > i) continue outer; if (i == 3) break outer; r.push(i * 10 + j); } } return r; }", json!([11, 21, 22])),
        ("function main() { let r = 0; block: { r = 1; if (r) break block; r = 2; } return r; }", json!(1)),
        ("function f(x) { switch (x) { case 1: return \"one\"; case 2: case 3: return \"few\"; default: return \"many\"; } }\nfunction main() { return [f(1), f(3), f(9)]; }", json!(["one", "few", "many"])),
        ("function main() { let s = \"\"; switch (2) { case 1: s += \"a\"; case 2: s += \"b\"; case 3: s += \"c\"; break; case 4: s += \"d\"; } return s; }", json!("bc")),
        ("function main() { switch (\"1\") { case 1: return \"number\"; default: return \"strict\"; } }", json!("strict")),
        ("function main() { const a = [1, 2]; for (const x of a) { if (a.length < 4) a.push(x); } return a; }", json!([1, 2, 1, 2])),
    ]);
}

#[test]
fn exceptions_are_thrown_caught_and_finalised() {
    check_progs(&[
        ("function main() { try { throw new Error(\"boom\"); } catch (e) { return [e.message, e.name, e instanceof Error, String(e)]; } }", json!(["boom", "Error", true, "Error: boom"])),
        ("function main() { try { null.x; } catch (e) { return [e.name, e.message, e instanceof TypeError, e instanceof Error, e instanceof RangeError]; } }", json!(["TypeError", "Cannot read properties of null (reading 'x')", true, true, false])),
        ("function main() { try { throw 42; } catch (e) { return e; } }", json!(42)),
        ("function main() { try { throw {code: 7}; } catch ({code}) { return code; } }", json!(7)),
        ("function main() { const log = []; try { log.push(1); } finally { log.push(2); } return log; }", json!([1, 2])),
        ("function f() { try { return \"try\"; } finally { log.push(\"finally\"); } }\nconst log = [];\nfunction main() { return [f(), log]; }", json!(["try", ["finally"]])),
        ("function main() { try { try { throw new RangeError(\"r\"); } finally { } } catch (e) { return e.name; } }", json!("RangeError")),
        ("function main() { try { undefinedThing(); } catch { return \"caught\"; } }", json!("caught")),
        ("function main() { try { JSON.parse(\"{bad\"); } catch (e) { return e.name; } }", json!("SyntaxError")),
        ("function main() { try { ctxless.x = 1 } catch (e) { return e.message } }", json!("ctxless is not defined")),
        ("function main() { try { const c = 1; c = 2; } catch (e) { return e.message } }", json!("Assignment to constant variable.")),
        ("class MyErr extends Error { constructor(m) { super(m); this.name = \"MyErr\"; } }\nfunction main() { try { throw new MyErr(\"bad\"); } catch (e) { return [e.name, e.message, e instanceof MyErr, e instanceof Error, String(e)]; } }", json!(["MyErr", "bad", true, true, "MyErr: bad"])),
    ]);
}

#[test]
fn objects_arrays_destructuring_and_spread_work() {
    check_progs(&[
        ("function main() { const a = 1, b = 2; return {a, b, [\"c\" + 1]: 3, 'd-e': 4, 5: 5}; }", json!({"a": 1, "b": 2, "c1": 3, "d-e": 4, "5": 5})),
        ("function main() { const o = {a: 1, b: {c: 2}}; return {...o, a: 9, d: undefined}; }", json!({"a": 9, "b": {"c": 2}})),
        ("function main() { const {a, b: {c}, d = 4, ...rest} = {a: 1, b: {c: 2}, e: 5, f: 6}; return [a, c, d, rest]; }", json!([1, 2, 4, {"e": 5, "f": 6}])),
        ("function main() { const [x, , y = 3, ...zs] = [1, 2, undefined, 4, 5]; return [x, y, zs]; }", json!([1, 3, [4, 5]])),
        ("function main() { let a = 1, b = 2; [a, b] = [b, a]; return [a, b]; }", json!([2, 1])),
        ("function main() { const o = {}; ({x: o.y} = {x: 5}); return o; }", json!({"y": 5})),
        ("function f({name, replicas = 1}, [first] = []) { return name + replicas + first; }\nfunction main() { return f({name: \"w\"}, [\"!\"]); }", json!("w1!")),
        ("function main() { return [...[1, 2], ...\"ab\", ...new Set([3])]; }", json!([1, 2, "a", "b", 3])),
        ("function main() { const o = {a: 1}; delete o.a; return [\"a\" in o, o]; }", json!([false, {}])),
        ("function main() { return [\"length\" in [], 0 in [1], \"x\" in {x: undefined}]; }", json!([true, true, true])),
        ("function main() { const a = []; a[3] = 1; return [a.length, a]; }", json!([4, [null, null, null, 1]])),
        ("function main() { const a = [1, 2, 3]; a.length = 1; return a; }", json!([1])),
        ("function main() { const o = {b: 1, a: 2, 10: 3, 2: 4}; return [Object.keys(o), Object.values(o), Object.entries(o)[0]]; }", json!([["2", "10", "b", "a"], [4, 3, 1, 2], ["2", 4]])),
        ("function main() { return Object.fromEntries([[\"a\", 1], [\"b\", 2]]); }", json!({"a": 1, "b": 2})),
        ("function main() { return Object.assign({a: 1}, {b: 2}, {a: 3}); }", json!({"a": 3, "b": 2})),
        ("function main() { return [{a: 1}.hasOwnProperty(\"a\"), Array.isArray([]), Array.isArray({})]; }", json!([true, true, false])),
        ("function main() { const s = {spec: {}}; return [s.spec?.replicas ?? 1, s.status?.x.y.z, s.nope?.[0], s.f?.(), s.spec.g?.()]; }", json!([1, null, null, null, null])),
        ("function main() { return Object.freeze({a: 1}); }", json!({"a": 1})),
        ("function main() { const a = {x: {y: [1]}}; const b = structuredClone(a); b.x.y.push(2); return [a, b, Object.hasOwn(a, \"x\"), Object.hasOwn(a, \"z\")]; }", json!([{"x": {"y": [1]}}, {"x": {"y": [1, 2]}}, true, false])),
        ("function main() { function who(p) { return this.n + p; } return [who.call({n: 1}, 2), who.apply({n: 3}, [4]), Math.max.apply(null, [1, 5, 2])]; }", json!([3, 7, 5])),
    ]);
}

#[test]
fn array_methods_work() {
    check(&[
        ("[3, 1, 2].map(x => x * 2)", json!([6, 2, 4])),
        ("[1, 2, 3, 4].filter(x => x % 2 == 0)", json!([2, 4])),
        ("[1, 2, 3].reduce((a, b) => a + b)", json!(6)),
        ("[1, 2, 3].reduce((a, b) => a + b, 10)", json!(16)),
        ("[\"a\", \"b\"].reduceRight((a, b) => a + b)", json!("ba")),
        ("[1, 2, 3].find(x => x > 1)", json!(2)),
        ("[1, 2, 3].findIndex(x => x > 5)", json!(-1)),
        ("[1, 2, 3].findLast(x => x < 3)", json!(2)),
        ("[1, 2, 3].some(x => x > 2)", json!(true)),
        ("[1, 2, 3].every(x => x > 2)", json!(false)),
        ("[1, 2, 3].indexOf(2)", json!(1)),
        ("[NaN].indexOf(NaN)", json!(-1)),
        ("[NaN].includes(NaN)", json!(true)),
        ("[1, 2, 3].slice(-2)", json!([2, 3])),
        ("[1, 2, 3].slice(1, -1)", json!([2])),
        ("[1, 2].concat([3, [4]], 5)", json!([1, 2, 3, [4], 5])),
        ("[1, null, undefined, 2].join(\"-\")", json!("1---2")),
        ("[1, [2, [3, [4]]]].flat()", json!([1, 2, [3, [4]]])),
        ("[1, [2, [3, [4]]]].flat(Infinity)", json!([1, 2, 3, 4])),
        ("[1, 2].flatMap(x => [x, x * 10])", json!([1, 10, 2, 20])),
        ("[1, 2, 3].at(-1)", json!(3)),
        ("[1, 2, 3].reverse()", json!([3, 2, 1])),
        ("[\"a\", \"b\"].entries()", json!([[0, "a"], [1, "b"]])),
        ("[\"a\", \"b\"].keys()", json!([0, 1])),
        ("Array.from(\"abc\")", json!(["a", "b", "c"])),
        ("Array.from({length: 3}, (_, i) => i * i)", json!([0, 1, 4])),
        ("Array.from(new Map([[1, 2]]))", json!([[1, 2]])),
        ("new Array(3).fill(0)", json!([0, 0, 0])),
        ("Array.of(7, 8)", json!([7, 8])),
        ("(() => { const a = [1, 2, 3, 4, 5]; const r = a.splice(1, 2, \"x\"); return [a, r]; })()", json!([[1, "x", 4, 5], [2, 3]])),
        ("(() => { const a = [1]; a.unshift(0); a.push(2, 3); const p = a.pop(); const s = a.shift(); return [a, p, s]; })()", json!([[1, 2], 3, 0])),
        ("(() => { const out = []; [5, 6].forEach((v, i) => out.push(v + i)); return out; })()", json!([5, 7])),
        ("[1, 2, 3].length", json!(3)),
        ("String([1, [2, 3]])", json!("1,2,3")),
    ]);
}

#[test]
fn sort_is_stable_and_defaults_to_string_order() {
    check(&[
        ("[10, 9, 1, 2, 100].sort()", json!([1, 10, 100, 2, 9])),
        ("[10, 9, 1, 2, 100].sort((a, b) => a - b)", json!([1, 2, 9, 10, 100])),
        ("[\"b\", undefined, \"a\"].sort()", json!(["a", "b", null])),
        (
            "[{n: \"a\", k: 2}, {n: \"b\", k: 1}, {n: \"c\", k: 2}, {n: \"d\", k: 1}].sort((x, y) => x.k - y.k).map(o => o.n).join(\"\")",
            json!("bdac"),
        ),
        ("[3, 1, 2].sort(() => Math.random() - 0.5).length", json!(3)),
        ("[3, 1, 2].sort(() => NaN)", json!([3, 1, 2])),
        ("(() => { const a = [3, 1, 2]; const b = a.toSorted(); return [a, b]; })()", json!([[3, 1, 2], [1, 2, 3]])),
    ]);
}

#[test]
fn string_methods_work_in_utf16_units() {
    check(&[
        ("\"héllo\".length", json!(5)),
        ("\"😀\".length", json!(2)),
        ("\"abc\"[1]", json!("b")),
        ("\"abc\"[5]", J::Null),
        ("\"a,b,,c\".split(\",\")", json!(["a", "b", "", "c"])),
        ("\"abc\".split(\"\")", json!(["a", "b", "c"])),
        ("\"a-b-c\".split(\"-\", 2)", json!(["a", "b"])),
        (
            "\"  x \".trim() + \"|\" + \" x \".trimStart() + \"|\" + \" x \".trimEnd()",
            json!("x|x | x"),
        ),
        ("\"web-1\".startsWith(\"web\")", json!(true)),
        ("\"web-1\".endsWith(\"-1\")", json!(true)),
        ("\"web-1\".includes(\"b-\")", json!(true)),
        ("\"banana\".indexOf(\"na\")", json!(2)),
        ("\"banana\".lastIndexOf(\"na\")", json!(4)),
        ("\"banana\".indexOf(\"x\")", json!(-1)),
        ("\"hello\".slice(1, -1)", json!("ell")),
        ("\"hello\".slice(-3)", json!("llo")),
        ("\"hello\".substring(3, 1)", json!("el")),
        (
            "\"MiXeD\".toUpperCase() + \"MiXeD\".toLowerCase()",
            json!("MIXEDmixed"),
        ),
        ("\"a.b.c\".replace(\".\", \"/\")", json!("a/b.c")),
        ("\"a.b.c\".replaceAll(\".\", \"/\")", json!("a/b/c")),
        ("\"ab\".replaceAll(\"\", \"-\")", json!("-a-b-")),
        ("\"x\".replace(\"x\", () => \"y\")", json!("y")),
        ("\"5\".padStart(3, \"0\")", json!("005")),
        ("\"5\".padEnd(3)", json!("5  ")),
        ("\"ab\".repeat(3)", json!("ababab")),
        ("\"abc\".at(-1)", json!("c")),
        ("\"abc\".charAt(1)", json!("b")),
        ("\"abc\".charCodeAt(0)", json!(97)),
        ("`a${1 + 1}b${\"c\"}`", json!("a2bc")),
        ("`line\\n${[1, 2]}`", json!("line\n1,2")),
        ("\"\\u0041\\x42\\u{1F600}\".length", json!(4)),
        ("\"b\".localeCompare(\"a\")", json!(1)),
        ("String.fromCharCode(72, 105)", json!("Hi")),
    ]);
}

#[test]
fn global_functions_and_math_work() {
    check(&[
        ("parseInt(\"42px\")", json!(42)),
        ("parseInt(\"0x1F\")", json!(31)),
        ("parseInt(\"ff\", 16)", json!(255)),
        ("String(parseInt(\"px\"))", json!("NaN")),
        ("parseFloat(\"3.5e2rest\")", json!(350)),
        ("parseFloat(\".5\")", json!(0.5)),
        ("Number(\"12\")", json!(12)),
        ("Number(null)", json!(0)),
        ("String(Number(undefined))", json!("NaN")),
        ("Number(\"\")", json!(0)),
        ("Number([5])", json!(5)),
        ("Boolean(\"\")", json!(false)),
        ("String(null) + String(true)", json!("nulltrue")),
        ("Number.isInteger(5.0)", json!(true)),
        ("Number.isInteger(\"5\")", json!(false)),
        ("isNaN(\"x\")", json!(true)),
        ("Math.floor(-1.5)", json!(-2)),
        ("Math.ceil(1.1)", json!(2)),
        ("Math.round(2.5)", json!(3)),
        ("Math.round(-2.5)", json!(-2)),
        ("Math.round(-0.4) === 0", json!(true)),
        ("Math.abs(-3)", json!(3)),
        ("Math.max(1, 5, 3)", json!(5)),
        ("Math.min()", json!(null)),
        ("String(Math.max())", json!("-Infinity")),
        ("String(Math.max(1, NaN))", json!("NaN")),
        ("Math.pow(2, 8)", json!(256)),
        ("Math.sqrt(16)", json!(4)),
        ("Math.trunc(-4.7)", json!(-4)),
        ("Math.sign(-3)", json!(-1)),
        ("Math.PI > 3.14", json!(true)),
        ("Number.MAX_SAFE_INTEGER", json!(9007199254740991u64)),
    ]);
}

#[test]
fn json_stringify_and_parse_follow_javascript() {
    check(&[
        (
            "JSON.stringify({a: [1, \"x\", null, undefined, () => 1], b: undefined, c: true})",
            json!("{\"a\":[1,\"x\",null,null,null],\"c\":true}"),
        ),
        (
            "JSON.stringify({a: 1, b: [1, 2], c: {}}, null, 2)",
            json!("{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {}\n}"),
        ),
        ("JSON.stringify(\"q\\\"\\n\")", json!("\"q\\\"\\n\"")),
        ("JSON.stringify(undefined)", J::Null),
        ("JSON.stringify(new Map([[1, 2]]))", json!("{}")),
        (
            "JSON.stringify(new Date(0))",
            json!("\"1970-01-01T00:00:00.000Z\""),
        ),
        (
            "JSON.parse(\"[1, {\\\"a\\\": null}]\")",
            json!([1, {"a": null}]),
        ),
        ("JSON.parse(\"3\") + 1", json!(4)),
        (
            "JSON.stringify({b: 1, a: 2, 1: 0})",
            json!("{\"1\":0,\"b\":1,\"a\":2}"),
        ),
    ]);
    assert!(
        thrown("function main() { const a = {}; a.self = a; return JSON.stringify(a); }")
            .contains("TypeError: Converting circular structure to JSON")
    );
}

#[test]
fn maps_and_sets_keep_insertion_order() {
    check_progs(&[
        ("function main() { const m = new Map(); m.set(\"z\", 1).set(\"a\", 2); m.set(\"z\", 3); return [...m.keys(), m.get(\"z\"), m.size, m.has(\"a\"), m.get(\"nope\")]; }", json!(["z", "a", 3, 2, true, null])),
        ("function main() { const m = new Map([[1, \"n\"], [\"1\", \"s\"]]); return [m.get(1), m.get(\"1\"), m.size]; }", json!(["n", "s", 2])),
        ("function main() { const k = {}; const m = new Map([[k, 1]]); return [m.get(k), m.get({})]; }", json!([1, null])),
        ("function main() { const m = new Map([[\"a\", 1], [\"b\", 2]]); m.delete(\"a\"); m.set(\"a\", 3); const out = []; m.forEach((v, k) => out.push(k + v)); return out; }", json!(["b2", "a3"])),
        ("function main() { const s = new Set([1, 2, 2, NaN, NaN]); s.add(1); s.delete(2); return [[...s].length, s.size, s.has(NaN)]; }", json!([2, 2, true])),
        ("function main() { return [new Map() instanceof Map, new Set() instanceof Set, [] instanceof Array, [] instanceof Object]; }", json!([true, true, true, true])),
        ("function main() { return [...new Map([[\"a\", 1]]).entries()]; }", json!([["a", 1]])),
    ]);
}

#[test]
fn classes_support_inheritance_super_and_statics() {
    check_progs(&[
        (
            "class Animal { constructor(name) { this.name = name; } speak() { return this.name + \" makes a sound\"; } static create(n) { return new this(n); } }
             class Dog extends Animal { constructor(name) { super(name); this.kind = \"dog\"; } speak() { return super.speak() + \" (woof)\"; } }
             function main() { const d = new Dog(\"Rex\"); return [d.speak(), d instanceof Dog, d instanceof Animal, d.kind, Dog.create ? \"inherited\" : \"no\", Animal.create(\"x\").name]; }",
            json!(["Rex makes a sound (woof)", true, true, "dog", "inherited", "x"]),
        ),
        ("class P { x = 1; y = this.x + 1; get2() { return this.y; } }\nfunction main() { return [new P().get2(), new P()]; }", json!([2, {"x": 1, "y": 2}])),
        ("class A { constructor() { this.a = 1; } }\nclass B extends A { b = 2; }\nfunction main() { return new B(); }", json!({"a": 1, "b": 2})),
        ("class C { toString() { return \"C!\"; } }\nfunction main() { return `${new C()}`; }", json!("C!")),
        ("class Counter { constructor() { this.n = 0; } inc() { this.n++; return this; } }\nfunction main() { return new Counter().inc().inc().n; }", json!(2)),
    ]);
    assert!(thrown("class A {}\nfunction main() { return A(); }")
        .contains("TypeError: Class constructor A cannot be invoked without 'new'"));
}

#[test]
fn dates_and_time_come_from_the_simulated_clock() {
    let p = Program::parse(
        "function main() { return [Date.now(), new Date().getTime(), new Date().toISOString(), new Date(\"2024-01-02T03:04:05Z\").getTime(), Date.parse(\"2024-03-01\"), new Date(0).getUTCFullYear()]; }",
    )
    .unwrap();
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    let got = i
        .call("main", vec![], &mut FakeHost::default(), 1_704_164_645_123)
        .unwrap();
    assert_eq!(
        got,
        json!([
            1_704_164_645_123u64,
            1_704_164_645_123u64,
            "2024-01-02T03:04:05.123Z",
            1_704_164_645_000u64,
            1_709_251_200_000u64,
            1970
        ])
    );
    check(&[
        (
            "new Date(\"2024-01-02T03:04:05+01:00\").toISOString()",
            json!("2024-01-02T02:04:05.000Z"),
        ),
        ("String(new Date(\"nonsense\").getTime())", json!("NaN")),
        (
            "new Date(2024, 1, 29).toISOString()",
            json!("2024-02-29T00:00:00.000Z"),
        ),
        ("new Date(1e12) - new Date(0)", json!(1_000_000_000_000u64)),
        ("String(new Date(1e300, 1e300).getTime())", json!("NaN")),
        ("String(new Date(8.64e15 + 1).getTime())", json!("NaN")),
    ]);
}

#[test]
fn math_random_is_reproducible_per_seed_and_advances_across_calls() {
    let p = Program::parse("function main() { return [Math.random(), Math.random()]; }").unwrap();
    let draw = |seed: u64| {
        let mut i = Instance::start(&p, seed, Limits::default(), 0).unwrap();
        let a = i.call("main", vec![], &mut FakeHost::default(), 0).unwrap();
        let b = i.call("main", vec![], &mut FakeHost::default(), 0).unwrap();
        (a, b)
    };
    let (a1, b1) = draw(42);
    let (a2, b2) = draw(42);
    let (a3, _) = draw(43);
    assert_eq!((&a1, &b1), (&a2, &b2));
    assert_ne!(a1, b1, "the generator's state persists between calls");
    assert_ne!(a1, a3);
    for v in a1.as_array().unwrap() {
        let x = v.as_f64().unwrap();
        assert!((0.0..1.0).contains(&x));
    }
}

#[test]
fn module_state_persists_across_calls_and_a_new_start_resets_it() {
    let p = Program::parse("let n = 0;\nconst seen = new Map();\nfunction main(k) { n++; seen.set(k, n); return [n, seen.size]; }").unwrap();
    let mut host = FakeHost::default();
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    assert_eq!(
        i.call("main", vec![Arg::Json(json!("a"))], &mut host, 0)
            .unwrap(),
        json!([1, 1])
    );
    assert_eq!(
        i.call("main", vec![Arg::Json(json!("b"))], &mut host, 0)
            .unwrap(),
        json!([2, 2])
    );
    let mut fresh = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    assert_eq!(
        fresh
            .call("main", vec![Arg::Json(json!("a"))], &mut host, 0)
            .unwrap(),
        json!([1, 1])
    );
    assert_eq!(p.functions(), vec!["main".to_string()]);
    assert_eq!(
        i.call("nope", vec![], &mut host, 0),
        Err(RunError::NoSuchFunction("nope".into()))
    );
}

#[test]
fn results_convert_to_json_as_json_stringify_would() {
    check(&[
        ("undefined", J::Null),
        ("() => 1", J::Null),
        ("new Map([[1, 2]])", json!({})),
        ("[undefined, () => 1]", json!([null, null])),
        ("NaN", J::Null),
        ("{a: undefined, b: 1}", json!({"b": 1})),
        ("-0", json!(0)),
    ]);
}

const EXAMPLE: &str = r#"
let passes = 0;                       // module-level state lives as long as the instance
function reconcile(req, ctx) {
  passes++;
  const site = ctx.get("Website", req.name, req.namespace);
  if (!site) return;
  const want = site.spec.replicas ?? 1;
  const dep = ctx.get("Deployment", req.name, req.namespace);
  if (!dep) {
    ctx.create({apiVersion: "apps/v1", kind: "Deployment",
      metadata: {name: req.name, namespace: req.namespace, ownerReferences: [ctx.controllerRef(site)]},
      spec: {replicas: want, selector: {matchLabels: {app: req.name}},
        template: {metadata: {labels: {app: req.name}}, spec: {containers: [{name: "web", image: site.spec.image}]}}}});
  } else if (dep.spec.replicas !== want) {
    ctx.patch("Deployment", req.name, {spec: {replicas: want}}, req.namespace);
  }
  ctx.updateStatus({...site, status: {availableReplicas: dep?.status?.availableReplicas ?? 0}});
  ctx.log(`pass ${passes}: want ${want}`);
  return {requeueAfter: "30s"};
}
"#;

#[test]
fn the_example_controller_creates_then_patches_through_the_host() {
    let p = Program::parse(EXAMPLE).unwrap();
    assert_eq!(p.functions(), vec!["reconcile".to_string()]);
    let mut inst = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    let site = json!({"kind": "Website", "metadata": {"name": "blog", "namespace": "default"}, "spec": {"replicas": 3, "image": "nginx"}});
    let mut host = FakeHost {
        store: vec![site.clone()],
        ..FakeHost::default()
    };
    let req = Arg::Json(json!({"name": "blog", "namespace": "default"}));
    let out = inst
        .call(
            "reconcile",
            vec![req.clone(), Arg::Host("ctx".into())],
            &mut host,
            0,
        )
        .unwrap();
    assert_eq!(out, json!({"requeueAfter": "30s"}));
    let methods: Vec<&str> = host.calls.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        methods,
        [
            "get",
            "get",
            "controllerRef",
            "create",
            "updateStatus",
            "log"
        ]
    );
    let created = &host.calls[3].2[0];
    assert_eq!(created["spec"]["replicas"], json!(3));
    assert_eq!(
        created["spec"]["template"]["spec"]["containers"][0]["image"],
        json!("nginx")
    );
    assert_eq!(
        created["metadata"]["ownerReferences"][0]["controller"],
        json!(true)
    );
    assert_eq!(
        host.calls[4].2[0]["status"],
        json!({"availableReplicas": 0})
    );
    assert_eq!(host.calls[4].2[0]["spec"], site["spec"]);
    assert_eq!(host.calls[5].2, vec![json!("pass 1: want 3")]);

    // Second pass: the Deployment exists with the wrong replica count.
    host.store.push(json!({"kind": "Deployment", "metadata": {"name": "blog"}, "spec": {"replicas": 1}, "status": {"availableReplicas": 1}}));
    host.calls.clear();
    inst.call(
        "reconcile",
        vec![req, Arg::Host("ctx".into())],
        &mut host,
        0,
    )
    .unwrap();
    let methods: Vec<&str> = host.calls.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(methods, ["get", "get", "patch", "updateStatus", "log"]);
    assert_eq!(
        host.calls[2].2,
        vec![
            json!("Deployment"),
            json!("blog"),
            json!({"spec": {"replicas": 3}}),
            json!("default")
        ]
    );
    assert_eq!(
        host.calls[3].2[0]["status"],
        json!({"availableReplicas": 1})
    );
    assert_eq!(host.calls[4].2, vec![json!("pass 2: want 3")]);
}

#[test]
fn an_object_the_host_returned_and_the_script_mutated_leaves_the_host_data_alone() {
    let p = Program::parse(
        "function main(ctx) { const a = ctx.get(\"Website\", \"w\"); a.spec.replicas = 99; delete a.metadata; const b = ctx.get(\"Website\", \"w\"); return [a.spec.replicas, b.spec.replicas, b.metadata.name]; }",
    )
    .unwrap();
    let mut host = FakeHost {
        store: vec![json!({"kind": "Website", "metadata": {"name": "w"}, "spec": {"replicas": 1}})],
        ..FakeHost::default()
    };
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    let out = i
        .call("main", vec![Arg::Host("ctx".into())], &mut host, 0)
        .unwrap();
    assert_eq!(out, json!([99, 1, "w"]));
    assert_eq!(host.store[0]["spec"]["replicas"], json!(1));
}

#[test]
fn a_host_error_is_thrown_into_the_script_and_console_log_reaches_the_host() {
    let p = Program::parse(
        "function main(ctx) { console.log(\"n =\", 1, {a: [1]}); try { ctx.fail(); } catch (e) { return [e.message, e instanceof Error]; } }",
    )
    .unwrap();
    let mut host = FakeHost::default();
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    let out = i
        .call("main", vec![Arg::Host("ctx".into())], &mut host, 0)
        .unwrap();
    assert_eq!(out, json!(["the API server said no", true]));
    assert_eq!(
        host.calls[0],
        (
            "console".to_string(),
            "log".to_string(),
            vec![json!("n = 1 {\"a\":[1]}")]
        )
    );
    assert!(thrown("function main() { return ctx.get(); }")
        .contains("ReferenceError: ctx is not defined"));
}

#[test]
fn runtime_errors_use_v8_wording_and_point_at_the_failing_expression() {
    let cases: &[(&str, &str)] = &[
        (
            "function main() {\n  const site = undefined;\n  return site.spec;\n}",
            "TypeError: Cannot read properties of undefined (reading 'spec') (line 3, column 14)",
        ),
        (
            "function main() {\n  return foo;\n}",
            "ReferenceError: foo is not defined (line 2, column 10)",
        ),
        (
            "function main() {\n  const x = 1;\n  x();\n}",
            "TypeError: x is not a function (line 3, column 3)",
        ),
        (
            "function main() {\n  const o = {};\n  o.method();\n}",
            "TypeError: o.method is not a function (line 3, column 3)",
        ),
        (
            "function main() {\n  throw new Error(\"custom\");\n}",
            "Error: custom (line 2, column 3)",
        ),
        (
            "function main() {\n  throw \"plain\";\n}",
            "Uncaught plain (line 2, column 3)",
        ),
        (
            "function main() { null.x = 1; }",
            "TypeError: Cannot set properties of null (setting 'x')",
        ),
        (
            "function main() { const {a} = undefined; }",
            "TypeError: Cannot destructure 'undefined' as it is undefined.",
        ),
        (
            "function main() { for (const x of 5) {} }",
            "TypeError: 5 is not iterable",
        ),
        ("function main() { new Map()(); }", "is not a function"),
        (
            "function main() { [].reduce((a, b) => a); }",
            "TypeError: Reduce of empty array with no initial value",
        ),
        (
            "function main() { \"x\".repeat(-1); }",
            "RangeError: Invalid count value: -1",
        ),
        (
            "function main() { new (class {}).x(); }",
            "TypeError: (intermediate value).x is not a constructor",
        ),
    ];
    for (src, want) in cases {
        let got = thrown(src);
        assert!(got.contains(want), "{src}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn parse_errors_and_refusals_carry_line_and_column() {
    let cases: &[(&str, u32, u32, &str)] = &[
        (
            "function f() {\n  return 1;\n}}",
            3,
            2,
            "SyntaxError: Unexpected token '}'",
        ),
        ("let x = ;", 1, 9, "SyntaxError: Unexpected token ';'"),
        (
            "let x = (1 + 2",
            1,
            15,
            "SyntaxError: Unexpected end of input",
        ),
        (
            "function f() {\n  async function g() {}\n}",
            2,
            3,
            "async functions are not supported by the playground's JavaScript",
        ),
        (
            "const f = async () => 1;",
            1,
            11,
            "async functions are not supported",
        ),
        ("function* g() {}", 1, 9, "generators are not supported"),
        (
            "const r = /ab+c/;",
            1,
            11,
            "regular expression literals are not supported",
        ),
        (
            "x = \"a\".replace(/a/g, \"b\");",
            1,
            17,
            "regular expression literals are not supported",
        ),
        ("eval(\"1\")", 1, 1, "eval is not supported"),
        (
            "const f = Function(\"return 1\");",
            1,
            11,
            "the Function constructor is not supported",
        ),
        ("new Proxy({}, {})", 1, 5, "Proxy is not supported"),
        ("Reflect.ownKeys({})", 1, 1, "Reflect is not supported"),
        ("globalThis.x = 1", 1, 1, "globalThis is not supported"),
        ("import fs from \"fs\";", 1, 1, "import is not supported"),
        ("with (o) {}", 1, 1, "with statements are not supported"),
        (
            "const o = { get x() { return 1; } };",
            1,
            13,
            "getters and setters are not supported",
        ),
        ("const n = 10n;", 1, 11, "BigInt literals are not supported"),
        ("return 1;", 1, 1, "SyntaxError: Illegal return statement"),
        ("const x;", 1, 8, "Missing initializer"),
        ("let s = \"abc", 1, 9, "Invalid or unexpected token"),
        ("let t = `abc", 1, 9, "Unterminated template literal"),
        ("1 = 2;", 1, 1, "Invalid left-hand side in assignment"),
        ("class A { #x = 1 }", 1, 11, "private class members"),
        (
            "function f() { await g(); }",
            1,
            16,
            "await is not supported",
        ),
    ];
    for (src, line, col, want) in cases {
        let d = refused(src);
        assert!(d.message.contains(want), "{src}: got {d}, want {want}");
        assert_eq!((d.line, d.column), (*line, *col), "{src}: {d}");
    }
    assert_eq!(
        refused("function f() {\n  async function g() {}\n}").to_string(),
        "async functions are not supported by the playground's JavaScript (line 2, column 3)"
    );
}

#[test]
fn a_program_without_semicolons_parses_by_automatic_insertion() {
    check_progs(&[
        (
            "let a = 1\nlet b = 2\nfunction main() {\n  const c = a + b\n  return c\n}",
            json!(3),
        ),
        ("function main() {\n  return\n  42\n}", J::Null),
        (
            "function main() { let i = 0\n i\n ++i\n return i }",
            json!(1),
        ),
        (
            "const f = x => ({v: x})\nfunction main() { return f(1) }",
            json!({"v": 1}),
        ),
    ]);
}

#[test]
fn a_while_true_loop_ends_as_a_budget_error() {
    let p = Program::parse("function main() { while (true) {} }").unwrap();
    let limits = Limits {
        steps: 10_000,
        ..Limits::default()
    };
    let mut i = Instance::start(&p, 1, limits, 0).unwrap();
    let e = i
        .call("main", vec![], &mut FakeHost::default(), 0)
        .unwrap_err();
    assert_eq!(e, RunError::Budget { steps: 10_000 });
    assert_eq!(
        e.to_string(),
        "reconcile exceeded its budget of 10000 steps"
    );
    // The default budget ends too, and a later call on the same instance gets a fresh budget.
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    assert!(matches!(
        i.call("main", vec![], &mut FakeHost::default(), 0),
        Err(RunError::Budget { .. })
    ));
    assert!(matches!(
        i.call("main", vec![], &mut FakeHost::default(), 0),
        Err(RunError::Budget { .. })
    ));
}

#[test]
fn work_hidden_in_built_ins_and_large_objects_is_paid_for_in_steps() {
    for src in [
        "function main() { const o = {}; for (let i = 0; ; i++) o[\"k\" + i] = i; }",
        "function main() { const m = new Map(); for (let i = 0; ; i++) m.set(i, i); }",
        "function main() { const a = []; for (let i = 0; i < 5000; i++) a.push(i); for (;;) a.includes(-1); }",
        "function main() { const a = Array.from({length: 100000}, (_, i) => i); for (;;) a.slice(); }",
    ] {
        let e = run_prog(src).unwrap_err();
        assert!(matches!(e, RunError::Budget { .. } | RunError::Memory { .. }), "{src}: {e}");
    }
}

#[test]
fn code_run_while_converting_arguments_cannot_break_a_built_in() {
    check_progs(&[
        ("function main() { const a = [1, 2, 3, 4]; const n = { valueOf() { a.length = 0; return 3; } }; const r = a.splice(0, n); return [a, r]; }", json!([[], []])),
        ("function main() { const a = [3, 1, 2]; a.sort((x, y) => { a.length = 0; return x - y; }); return a.length; }", json!(3)),
    ]);
}

#[test]
fn a_budget_error_cannot_be_caught_by_the_script() {
    let e = run_prog(
        "function main() { try { for (;;) {} } catch (e) { return 1; } finally { return 2; } }",
    )
    .unwrap_err();
    assert!(matches!(e, RunError::Budget { .. }), "{e}");
    let e =
        run_prog("function main() { for (;;) { try { while (true) {} } catch {} } }").unwrap_err();
    assert!(matches!(e, RunError::Budget { .. }), "{e}");
}

#[test]
fn top_level_code_is_bounded_too() {
    let p = Program::parse("while (true) {}").unwrap();
    let limits = Limits {
        steps: 1000,
        ..Limits::default()
    };
    assert!(matches!(
        Instance::start(&p, 1, limits, 0),
        Err(RunError::Budget { steps: 1000 })
    ));
    let p = Program::parse("const x = null.y;").unwrap();
    let e = Instance::start(&p, 1, Limits::default(), 0).err().unwrap();
    assert!(
        e.to_string().contains(
            "TypeError: Cannot read properties of null (reading 'y') (line 1, column 15)"
        ),
        "{e}"
    );
}

#[test]
fn growing_memory_without_bound_ends_as_a_memory_or_budget_error() {
    for src in [
        "function main() { let a = []; while (true) a.push(\"x\".repeat(1000)); }",
        "function main() { let s = \"x\"; while (true) s += s; }",
        "function main() { const m = new Map(); let i = 0; while (true) m.set(i++, [i]); }",
        "function main() { return \"x\".repeat(2 ** 40); }",
        "function main() { return new Array(2 ** 31).length; }",
        "function main() { const a = []; a[4e9] = 1; }",
        "function main() { const a = []; a.length = 4e9; }",
        "function main() { return \"ab\".padStart(2 ** 40); }",
        "function main() { return \"x\".repeat(900000).split(\"\").length; }",
        "function main() { return [...\"x\".repeat(900000)].length; }",
        "function main() { return Object.keys(new Array(900000)).length; }",
        "function main() { return JSON.parse(\"[\" + \"1,\".repeat(300000) + \"1]\").length; }",
    ] {
        let p = Program::parse(src).unwrap();
        let limits = Limits {
            memory_bytes: 1 << 20,
            ..Limits::default()
        };
        let mut i = Instance::start(&p, 1, limits, 0).unwrap();
        let e = i
            .call("main", vec![], &mut FakeHost::default(), 0)
            .unwrap_err();
        assert!(
            matches!(e, RunError::Memory { .. } | RunError::Budget { .. })
                || e.to_string().contains("RangeError: Invalid array length"),
            "{src}: {e}"
        );
    }
    let e = run_prog("function main() { let a = []; while (true) a.push(\"x\".repeat(1000)); }")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the controller exceeded its memory cap of 16777216 bytes"
    );
}

#[test]
fn retained_module_state_is_capped_but_garbage_of_past_calls_is_not_counted() {
    let limits = Limits {
        memory_bytes: 200_000,
        ..Limits::default()
    };
    // Each call allocates ~100 kB that it drops: many calls stay fine.
    let p = Program::parse("function main() { const t = []; for (let i = 0; i < 1000; i++) t.push(\"y\".repeat(50)); return t.length; }").unwrap();
    let mut i = Instance::start(&p, 1, limits, 0).unwrap();
    for _ in 0..5 {
        assert_eq!(
            i.call("main", vec![], &mut FakeHost::default(), 0).unwrap(),
            json!(1000)
        );
    }
    // Keeping it in module state grows past the cap after a few calls.
    let p = Program::parse("const keep = [];\nfunction main() { for (let i = 0; i < 500; i++) keep.push(\"y\".repeat(50)); return keep.length; }").unwrap();
    let mut i = Instance::start(&p, 1, limits, 0).unwrap();
    let mut results = Vec::new();
    for _ in 0..5 {
        results.push(i.call("main", vec![], &mut FakeHost::default(), 0));
    }
    assert!(results[0].is_ok());
    assert!(
        results
            .iter()
            .any(|r| matches!(r, Err(RunError::Memory { .. }))),
        "{results:?}"
    );
}

#[test]
fn deep_recursion_is_a_range_error_the_script_can_catch() {
    let e = run_prog("function f(n) { return f(n + 1) + 1; }\nfunction main() { return f(0); }")
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("RangeError: Maximum call stack size exceeded"),
        "{e}"
    );
    check_progs(&[
        ("function f(n) { return f(n + 1); }\nfunction main() { try { f(0); } catch (e) { return e.name; } }", json!("RangeError")),
        ("function f(n) { return n == 0 ? 0 : 1 + f(n - 1); }\nfunction main() { return f(40); }", json!(40)),
        ("class A { constructor() { new A(); } }\nfunction main() { try { new A(); } catch (e) { return e.message; } }", json!("Maximum call stack size exceeded")),
        ("const o = { toString() { return `${this}`; } };\nfunction main() { try { return String(o); } catch (e) { return e.name; } }", json!("RangeError")),
    ]);
}

#[test]
fn deeply_nested_input_is_a_diagnostic_not_a_stack_overflow() {
    for src in [
        "(".repeat(100_000),
        "[".repeat(100_000),
        "{".repeat(100_000),
        format!("x = {}1{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("x = {}1", "-".repeat(100_000)),
        format!("x = {}1", "!".repeat(100_000)),
        format!("x = 1{}", " + 1".repeat(100_000)),
        format!("x = a{}", ".b".repeat(100_000)),
        format!("x = f{}", "()".repeat(100_000)),
        format!("x = {}", "a => ".repeat(100_000)),
        format!("x = {}1", "1 ? 2 : ".repeat(100_000)),
        format!("x = {}1", "y = ".repeat(100_000)),
        format!("let {}a{} = 1", "[".repeat(100_000), "]".repeat(100_000)),
        "if (1) ".repeat(100_000),
        format!("x = {}", "`${".repeat(100_000)),
        format!("x = {}", "new ".repeat(100_000)),
    ] {
        let d = refused(&src);
        assert!(!d.message.is_empty());
    }
    let d = refused(&"(".repeat(100_000));
    assert!(d.message.contains("nests deeper than 200 levels"), "{d}");
}

#[test]
fn values_nested_deeply_at_run_time_neither_overflow_nor_leak_a_panic() {
    check_progs(&[
        ("function main() { let a = []; for (let i = 0; i < 30000; i++) a = [a]; return 1; }", json!(1)),
        ("function main() { let o = {}; for (let i = 0; i < 30000; i++) o = {o}; return 2; }", json!(2)),
        ("function main() { let f = () => 0; for (let i = 0; i < 50000; i++) { const g = f; f = () => g(); } return 3; }", json!(3)),
        ("function main() { let a = []; for (let i = 0; i < 30000; i++) a = [a]; try { JSON.stringify(a); } catch (e) { return e.name; } }", json!("RangeError")),
        ("function main() { let a = []; for (let i = 0; i < 30000; i++) a = [a]; try { return String(a); } catch (e) { return e.name; } }", json!("RangeError")),
        ("function main() { let a = [1]; a.push(a); return String(a); }", json!("1,")),
        ("function main() { let a = []; for (let i = 0; i < 30000; i++) a = [a]; return a.flat(Infinity); }", json!([])),
    ]);
    let e = run_prog(
        "function main() { let a = []; for (let i = 0; i < 30000; i++) a = [a]; return a; }",
    )
    .unwrap_err();
    assert!(e.to_string().contains("RangeError"), "{e}");
}

#[test]
fn the_same_inputs_give_the_same_bytes() {
    let src = "let n = 0;\nfunction main(x) { n++; return {r: Math.random(), s: String(x / 3), d: new Date().toISOString(), n, k: Object.keys({b: 1, a: 2, 3: 0})}; }";
    let p = Program::parse(src).unwrap();
    let run = || {
        let mut i = Instance::start(&p, 99, Limits::default(), 5).unwrap();
        let mut out = Vec::new();
        for k in 0..3 {
            out.push(
                i.call(
                    "main",
                    vec![Arg::Json(json!(k))],
                    &mut FakeHost::default(),
                    1000 * k,
                )
                .unwrap()
                .to_string(),
            );
        }
        out
    };
    assert_eq!(run(), run());
}

#[test]
fn garbage_input_never_panics() {
    // A deterministic sweep of mutated programs: every one parses or is refused, and every
    // parsed one runs to a value or an error, within small limits.
    let base = EXAMPLE.to_string()
        + "function main() { const m = new Map([[1, [2]]]); let s = 0; for (const [k, v] of m) s += k + v[0]; class A extends Error {} try { throw new A(`x${s}`) } catch (e) { return [e.message, [3,1,2].sort(), JSON.stringify({a: [1, {b: 2}]}, null, 1)] } }";
    let chars: Vec<char> = base.chars().collect();
    let alphabet: Vec<char> = "(){}[];,.=+-*/%<>!?:&|^~'\"`$\\ \n0123456789abcxyz"
        .chars()
        .collect();
    let mut rng = crate::sim::rng::Rng::new(3);
    let limits = Limits {
        steps: 20_000,
        memory_bytes: 1 << 20,
        call_depth: 50,
    };
    for _ in 0..300 {
        let mut c = chars.clone();
        for _ in 0..rng.range(1, 4) {
            let at = rng.range(0, c.len() as u64 - 1) as usize;
            match rng.range(0, 2) {
                0 => {
                    c.remove(at);
                }
                1 => c.insert(
                    at,
                    alphabet[rng.range(0, alphabet.len() as u64 - 1) as usize],
                ),
                _ => c[at] = alphabet[rng.range(0, alphabet.len() as u64 - 1) as usize],
            }
        }
        let src: String = c.into_iter().collect();
        if let Ok(p) = Program::parse(&src) {
            if let Ok(mut i) = Instance::start(&p, 1, limits, 0) {
                for f in p.functions() {
                    let _ = i.call(
                        &f,
                        vec![Arg::Json(json!({"name": "a"})), Arg::Host("ctx".into())],
                        &mut FakeHost::default(),
                        0,
                    );
                }
            }
        }
    }
}

#[test]
fn cycles_a_call_leaves_behind_are_broken_so_reconciles_do_not_leak() {
    let p = Program::parse(
        "const keep = [];\nfunction main(k) { const self = {}; self.me = self; const f = () => f; const g = () => self; class A { m() { return this; } } const a = new A(); a.a = a; if (k) keep.push({n: 1}); return [1].map(x => x + 1); }",
    )
    .unwrap();
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    for _ in 0..3 {
        assert_eq!(
            i.call(
                "main",
                vec![Arg::Json(json!(false))],
                &mut FakeHost::default(),
                0
            )
            .unwrap(),
            json!([2])
        );
        assert_eq!(i.alive_after_call, 0);
    }
    i.call(
        "main",
        vec![Arg::Json(json!(true))],
        &mut FakeHost::default(),
        0,
    )
    .unwrap();
    assert_eq!(
        i.alive_after_call, 1,
        "only the object kept in module state survives"
    );
    assert_eq!(
        i.call(
            "main",
            vec![Arg::Json(json!(false))],
            &mut FakeHost::default(),
            0
        )
        .unwrap(),
        json!([2])
    );
}

#[test]
fn the_call_depth_limit_is_exact_and_configurable() {
    assert_eq!(
        Limits::default(),
        Limits {
            steps: 1_000_000,
            memory_bytes: 16 * 1024 * 1024,
            call_depth: 200,
        }
    );
    let p = Program::parse(
        "function f(n) { return n == 0 ? 0 : 1 + f(n - 1); }\nfunction main(n) { return f(n); }",
    )
    .unwrap();
    let limits = Limits {
        call_depth: 10,
        ..Limits::default()
    };
    let mut i = Instance::start(&p, 1, limits, 0).unwrap();
    // main is one frame, f(n) takes n + 1 more.
    assert_eq!(
        i.call(
            "main",
            vec![Arg::Json(json!(8))],
            &mut FakeHost::default(),
            0
        )
        .unwrap(),
        json!(8)
    );
    let e = i
        .call(
            "main",
            vec![Arg::Json(json!(9))],
            &mut FakeHost::default(),
            0,
        )
        .unwrap_err();
    assert_eq!(
        e,
        RunError::Thrown {
            name: "RangeError".into(),
            message: "Maximum call stack size exceeded".into(),
            line: 1,
            column: 41,
        }
    );
}

#[test]
fn nothing_outside_the_sandbox_exists() {
    for name in [
        "setTimeout",
        "require",
        "process",
        "window",
        "fetch",
        "document",
        "module",
        "exports",
    ] {
        let got = thrown(&format!("function main() {{ return {name}; }}"));
        assert!(
            got.contains(&format!("ReferenceError: {name} is not defined")),
            "{got}"
        );
    }
    check(&[
        ("typeof setTimeout", json!("undefined")),
        ("typeof console.log", json!("function")),
    ]);
}

#[test]
fn token_soup_never_panics() {
    // Random sequences of the subset's tokens: each parses or is refused, and what parses runs
    // to a value or an error within small limits.
    let words = [
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        ".",
        "?.",
        "...",
        "=>",
        "=",
        "+=",
        "??=",
        "+",
        "-",
        "*",
        "/",
        "%",
        "**",
        "<",
        "===",
        "==",
        "!",
        "&&",
        "||",
        "??",
        "?",
        ":",
        "++",
        "x",
        "y",
        "f",
        "0",
        "1e3",
        "\"s\"",
        "`t${x}`",
        "function",
        "class",
        "extends",
        "super",
        "new",
        "return",
        "if",
        "else",
        "for",
        "of",
        "in",
        "while",
        "do",
        "break",
        "continue",
        "let",
        "const",
        "var",
        "try",
        "catch",
        "finally",
        "throw",
        "switch",
        "case",
        "default",
        "this",
        "typeof",
        "delete",
        "null",
        "undefined",
        "true",
        "Map",
        "Set",
        "JSON",
        "Math",
        "Object",
        "Array",
        "Date",
        "Error",
        "\n",
    ];
    let mut rng = crate::sim::rng::Rng::new(11);
    let limits = Limits {
        steps: 5_000,
        memory_bytes: 1 << 20,
        call_depth: 30,
    };
    let mut parsed = 0;
    for _ in 0..4000 {
        let n = rng.range(1, 8);
        let mut src = String::from("function main(x, y) {\n");
        for _ in 0..n {
            src.push_str(words[rng.range(0, words.len() as u64 - 1) as usize]);
            src.push(' ');
        }
        src.push_str("\n}");
        if let Ok(p) = Program::parse(&src) {
            parsed += 1;
            if let Ok(mut i) = Instance::start(&p, 1, limits, 0) {
                let _ = i.call(
                    "main",
                    vec![Arg::Json(json!([1, {"a": 2}])), Arg::Host("ctx".into())],
                    &mut FakeHost::default(),
                    0,
                );
            }
        }
    }
    assert!(
        parsed > 50,
        "the sweep should reach the evaluator often enough: {parsed}"
    );
}

/// In an optimised build (the browser's), the deterministic limits (call depth, evaluator
/// depth) stop a deep recursion well before the native stack guard would, even with the wasm
/// budget: so native and wasm agree on where a program runs out of depth.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "an unoptimised build's frames are several times larger"
)]
fn an_optimised_build_hits_the_deterministic_limits_before_the_stack_guard() {
    assert_eq!(prog("function f(n) { return n == 0 ? 0 : 1 + f(n - 1); }\nfunction main() { return f(180); }"), json!(180));
    let src = "function f(n) { if (n > 0) { for (const x of [1]) { try { return [x, ...[f(n - 1)]].length > 0 ? 1 + f(n - 1 - 0 * x) - 1 + 1 : 0; } finally { } } } return 0; }\nfunction main() { return f(195); }";
    interp::MAX_STACK_USED.with(|m| m.set(0));
    let e = run_prog(src).unwrap_err();
    let used = interp::MAX_STACK_USED.with(|m| m.get());
    eprintln!("native stack used at the evaluator's depth limit: {used} bytes");
    assert!(
        e.to_string()
            .contains("RangeError: Maximum call stack size exceeded"),
        "{e}"
    );
    assert!(
        used < interp::WASM_STACK_BUDGET * 9 / 10,
        "{used} bytes: the wasm stack guard would fire first"
    );
}

#[test]
fn idioms_a_controller_author_writes_work() {
    let p = Program::parse(
        r#"
class Reconciler {
  constructor(ctx) { this.ctx = ctx; }
  ready(obj) {
    return obj?.status?.conditions?.find(c => c.type === "Ready")?.status === "True";
  }
  run(req) {
    const site = this.ctx.get("Website", req.name);
    if (!site) return { skipped: true };
    site.metadata.annotations ??= {};
    site.metadata.annotations["example.com/seen"] = String(Date.now());
    const labels = { ...site.metadata.labels, ...undefined, tier: "web" };
    const pairs = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`);
    const { metadata: { name, namespace = "default" } } = site;
    return { name, namespace, ready: this.ready(site), selector: pairs.join(","), seen: site.metadata.annotations };
  }
}
function reconcile(req, ctx) { return new Reconciler(ctx).run(req); }
"#,
    )
    .unwrap();
    let mut host = FakeHost {
        store: vec![
            json!({"kind": "Website", "metadata": {"name": "w", "labels": {"app": "w"}},
            "status": {"conditions": [{"type": "Progressing", "status": "True"}, {"type": "Ready", "status": "True"}]}}),
        ],
        ..FakeHost::default()
    };
    let mut i = Instance::start(&p, 1, Limits::default(), 0).unwrap();
    let out = i
        .call(
            "reconcile",
            vec![Arg::Json(json!({"name": "w"})), Arg::Host("ctx".into())],
            &mut host,
            42_000,
        )
        .unwrap();
    assert_eq!(
        out,
        json!({"name": "w", "namespace": "default", "ready": true, "selector": "app=w,tier=web",
               "seen": {"example.com/seen": "42000"}})
    );
    let out = i
        .call(
            "reconcile",
            vec![Arg::Json(json!({"name": "nope"})), Arg::Host("ctx".into())],
            &mut host,
            0,
        )
        .unwrap();
    assert_eq!(out, json!({"skipped": true}));
}

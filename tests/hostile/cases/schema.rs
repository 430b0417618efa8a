//! JSON schemas: the files under `tests/hostile/schema/` and generated large schemas.

use std::path::Path;

use super::{err, grammar_case, input, lines, schema_case, Battery, EITHER, LINE};
use crate::SLOW;

pub(super) fn schema_cases(b: &mut Battery) {
    schema_case(
        b,
        "ref_percent_utf8.json",
        &["ref_percent_utf8.json", "/$ref", "%"],
    );
    schema_case(
        b,
        "ref_percent_end.json",
        &["ref_percent_end.json", "/$ref", "%"],
    );
    schema_case(
        b,
        "ref_percent_bad_hex.json",
        &["ref_percent_bad_hex.json", "/$ref", "%zz"],
    );
    schema_case(
        b,
        "ref_percent_invalid_utf8.json",
        &["ref_percent_invalid_utf8.json", "/$ref"],
    );
    schema_case(
        b,
        "ref_percent_split_char.json",
        &["ref_percent_split_char.json", "/$ref"],
    );
    schema_case(b, "ref_percent_ok.json", &[]);
    schema_case(
        b,
        "ref_bad_tilde.json",
        &["ref_bad_tilde.json", "/$ref", "~2"],
    );
    schema_case(b, "ref_not_string.json", &["ref_not_string.json", "`$ref`"]);
    schema_case(
        b,
        "ref_nowhere.json",
        &["ref_nowhere.json", "/$ref", "nope"],
    );
    schema_case(
        b,
        "ref_remote.json",
        &["ref_remote.json", "/$ref", "http://example.com"],
    );
    schema_case(b, "ref_self.json", &["ref_self.json", "\\\"\\\""]);
    schema_case(
        b,
        "ref_cycle.json",
        &["ref_cycle.json", "admits no instance"],
    );
    schema_case(b, "allof_self.json", &["allof_self.json", "/allOf"]);
    schema_case(
        b,
        "allof_self_recursive_merge.json",
        &["allof_self_recursive_merge.json"],
    );
    schema_case(
        b,
        "allof_fanout.json",
        &["allof_fanout.json", "/definitions/d", "budget"],
    );
    schema_case(
        b,
        "ref_sibling_fanout.json",
        &["ref_sibling_fanout.json", "/definitions/d", "budget"],
    );
    schema_case(b, "anyof_fanout.json", &[]);
    schema_case(b, "anyof_allof_distribution.json", &[]);
    schema_case(
        b,
        "nested_pattern.json",
        &["nested_pattern.json", "/pattern", "16 MiB"],
    );
    schema_case(
        b,
        "pattern_huge_repeat.json",
        &["pattern_huge_repeat.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_dfa_blowup.json",
        &[EITHER, "pattern_dfa_blowup.json", "/pattern"],
    );
    // A long periodic literal searched anywhere in the string (found by fuzzing): each DFA
    // state remembers every partial match, so determinizing it took 8 s.
    schema_case(
        b,
        "pattern_periodic_search.json",
        &["pattern_periodic_search.json", "/pattern", "DFA"],
    );
    schema_case(
        b,
        "max_length_string.json",
        &["max_length_string.json", "/maxLength"],
    );
    schema_case(
        b,
        "max_items_fraction.json",
        &["max_items_fraction.json", "/maxItems"],
    );
    schema_case(
        b,
        "min_items_negative.json",
        &["min_items_negative.json", "/minItems"],
    );
    schema_case(
        b,
        "pattern_number.json",
        &["pattern_number.json", "/pattern"],
    );
    schema_case(
        b,
        "minimum_string.json",
        &["minimum_string.json", "/minimum"],
    );
    schema_case(
        b,
        "required_string.json",
        &["required_string.json", "/required"],
    );
    schema_case(
        b,
        "properties_array.json",
        &["properties_array.json", "/properties"],
    );
    schema_case(b, "enum_object.json", &["enum_object.json", "/enum"]);
    schema_case(
        b,
        "multiple_of_zero.json",
        &["multiple_of_zero.json", "/multipleOf"],
    );
    schema_case(
        b,
        "multiple_of_negative.json",
        &["multiple_of_negative.json", "/multipleOf"],
    );
    schema_case(
        b,
        "type_unknown.json",
        &["type_unknown.json", "/type", "nope"],
    );
    schema_case(
        b,
        "type_number_value.json",
        &["type_number_value.json", "/type"],
    );
    schema_case(b, "type_empty.json", &["type_empty.json", "\\\"\\\""]);
    schema_case(b, "enum_empty.json", &["enum_empty.json", "\\\"\\\""]);
    schema_case(b, "anyof_empty.json", &["anyof_empty.json", "\\\"\\\""]);
    schema_case(
        b,
        "allof_contradiction.json",
        &["allof_contradiction.json", "allOf"],
    );
    schema_case(
        b,
        "min_items_huge.json",
        &["min_items_huge.json", "minItems", "1024"],
    );
    schema_case(
        b,
        "max_items_u64.json",
        &["max_items_u64.json", "maxItems", "1024"],
    );
    schema_case(
        b,
        "min_items_1e300.json",
        &["min_items_1e300.json", "minItems", "1024"],
    );
    schema_case(
        b,
        "max_length_1e20.json",
        &["max_length_1e20.json", "/maxLength"],
    );
    // Counted by the lexer since length bounds stopped being unrolled: a verdict.
    schema_case(b, "min_length_300.json", &[]);
    schema_case(
        b,
        "number_out_of_range.json",
        &["number_out_of_range.json", "line 1"],
    );
    schema_case(
        b,
        "minimum_huge_integer.json",
        &["minimum_huge_integer.json", "/minimum"],
    );
    schema_case(b, "min_gt_max.json", &["min_gt_max.json", "\\\"\\\""]);
    schema_case(
        b,
        "min_length_gt_max.json",
        &["min_length_gt_max.json", "\\\"\\\""],
    );
    schema_case(
        b,
        "pattern_unbalanced.json",
        &["pattern_unbalanced.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_lookbehind.json",
        &["pattern_lookbehind.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_backref.json",
        &["pattern_backref.json", "/pattern"],
    );
    schema_case(
        b,
        "pattern_properties_bad.json",
        &["pattern_properties_bad.json", "/patternProperties"],
    );
    // A format outside the standard vocabularies is an annotation (a verdict, no error); a
    // standard one lacuna does not enforce is refused by name.
    schema_case(b, "format_unknown.json", &[]);
    schema_case(
        b,
        "format_unenforced.json",
        &["format_unenforced.json", "/format", "idn-hostname"],
    );
    schema_case(
        b,
        "schema_unknown.json",
        &["schema_unknown.json", "/$schema"],
    );
    schema_case(b, "weird_property_names.json", &[]);
    schema_case(b, "not_json.json", &["not_json.json", "line 1 column"]);
    schema_case(b, "empty.json", &["empty.json", "line 1 column"]);
    schema_case(b, "whitespace.json", &["whitespace.json", "line 2 column"]);
    schema_case(b, "scalar.json", &["scalar.json", "\\\"\\\"", "number"]);
    schema_case(b, "null.json", &["null.json", "\\\"\\\"", "null"]);
    schema_case(b, "false.json", &["false.json", "\\\"\\\""]);
    schema_case(b, "true.json", &[]);
    schema_case(
        b,
        "trailing_garbage.json",
        &["trailing_garbage.json", "line 1 column"],
    );
    schema_case(b, "invalid_utf8.json", &["invalid_utf8.json", "UTF-8"]);
    schema_case(b, "nul_bytes.json", &["nul_bytes.json", "line 1 column"]);
    schema_case(b, "bom.json", &["bom.json", "line 1 column 1"]);
    // The last `type` wins, as in most JSON readers.
    schema_case(b, "duplicate_keys.json", &[]);
    schema_case(
        b,
        "subschema_number.json",
        &["subschema_number.json", "/properties/a"],
    );
    schema_case(b, "items_string.json", &["items_string.json", "/items"]);
    schema_case(b, "not_keyword.json", &["not_keyword.json", "/not"]);
    schema_case(b, "const_deep.json", &[]);
    schema_case(
        b,
        "ref_chain_300.json",
        &["ref_chain_300.json", "/definitions/d", "128"],
    );
    schema_case(
        b,
        "prefix_items_many.json",
        &["prefix_items_many.json", "prefixItems", "1024"],
    );
    schema_case(b, "enum_strings_escapes.json", &[]);
    schema_case(b, "ok_person.json", &[]);
    schema_case(
        b,
        "ref_anchor_missing.json",
        &["ref_anchor_missing.json", "/$ref", "#missing"],
    );
    schema_case(
        b,
        "ref_into_non_schema.json",
        &["ref_into_non_schema.json", "/definitions/a"],
    );
    schema_case(
        b,
        "ref_into_array_index.json",
        &["ref_into_array_index.json", "#/anyOf/99"],
    );
    schema_case(
        b,
        "dependencies_weird.json",
        &["dependencies_weird.json", "/dependencies"],
    );
    schema_case(b, "any_order_many.json", &[]);

    // Generated (issue 19's examples and deep nesting).
    let numbers: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
    let p = b.file(
        "enum_10000.json",
        format!("{{\"enum\": [{}]}}", numbers.join(", ")),
    );
    grammar_case(
        b,
        "schema",
        "enum of 10,000 integers",
        &format!("schema:{p}"),
        &[EITHER, "enum_10000.json", "/enum"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let names: Vec<String> = (0..10_000).map(|i| format!("\"p{i}\"")).collect();
    let props: Vec<String> = (0..10_000)
        .map(|i| format!("\"p{i}\": {{\"type\": \"integer\"}}"))
        .collect();
    let p = b.file(
        "required_10000.json",
        format!(
            "{{\"type\": \"object\", \"properties\": {{{}}}, \"required\": [{}]}}",
            props.join(", "),
            names.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "10,000 required properties",
        &format!("schema:{p}"),
        &[EITHER, "required_10000.json", "/"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);
    let p = b.file(
        "required_only_10000.json",
        format!(
            "{{\"type\": \"object\", \"required\": [{}]}}",
            names.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "10,000 required names without properties",
        &format!("schema:{p}"),
        &[EITHER, "required_only_10000.json", "/required"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file(
        "pattern_1mb.json",
        format!(
            "{{\"type\": \"string\", \"pattern\": \"^{}$\"}}",
            "abcdefghij".repeat(100_000)
        ),
    );
    grammar_case(
        b,
        "schema",
        "1 MB literal pattern",
        &format!("schema:{p}"),
        &[EITHER, "pattern_1mb.json", "/pattern"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file(
        "deep_items_10000.json",
        format!(
            "{}{{}}{}",
            "{\"items\": ".repeat(10_000),
            "}".repeat(10_000)
        ),
    );
    grammar_case(
        b,
        "schema",
        "schema nested 10,000 levels (items)",
        &format!("schema:{p}"),
        &["deep_items_10000.json", "line 1"],
    );

    let mut defs = Vec::new();
    for i in 0..10_000 {
        defs.push(format!(
            "\"d{i}\": {{\"type\": \"array\", \"items\": {{\"$ref\": \"#/definitions/d{}\"}}}}",
            i + 1
        ));
    }
    defs.push("\"d10000\": {\"type\": \"integer\"}".into());
    let p = b.file(
        "ref_chain_10000.json",
        format!(
            "{{\"definitions\": {{{}}}, \"$ref\": \"#/definitions/d0\"}}",
            defs.join(", ")
        ),
    );
    grammar_case(
        b,
        "schema",
        "schema nested 10,000 levels through $ref",
        &format!("schema:{p}"),
        &["ref_chain_10000.json", "/definitions/d"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let big_enum: Vec<String> = (0..2000)
        .map(|i| format!("\"{}{i}\"", "x".repeat(500)))
        .collect();
    let p = b.file(
        "enum_long_strings.json",
        format!("{{\"enum\": [{}]}}", big_enum.join(",")),
    );
    grammar_case(
        b,
        "schema",
        "enum of 2,000 500-byte strings",
        &format!("schema:{p}"),
        &[EITHER, "enum_long_strings.json", "/enum"],
    );
    b.cases.last_mut().unwrap().timeout(SLOW);

    let p = b.file("dir.json/keep", "");
    let dir = Path::new(&p)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    grammar_case(
        b,
        "schema",
        "schema path is a directory",
        &format!("schema:{dir}"),
        &["dir.json"],
    );
    grammar_case(
        b,
        "schema",
        "schema: with an empty path",
        "schema:",
        &["schema:"],
    );
    grammar_case(
        b,
        "schema",
        "schema file that never ends (/dev/zero)",
        "schema:/dev/zero",
        &["/dev/zero"],
    );
    b.cases.last_mut().unwrap().max_rss(256);
    let lenient = format!("schema:{}", input("schema/max_length_string.json"));
    b.add(
        "schema",
        "wrong-type keyword in lenient mode",
        &["check", "--lenient", "--grammar", &lenient],
        LINE,
        lines(1, &[&["\"id\":\"g\"", "/maxLength"]]),
    );
    let p = format!("schema:{}", input("schema/allof_fanout.json"));
    b.add(
        "schema",
        "allOf fan-out: grammar stats",
        &["grammar", "stats", &p],
        "",
        err(&["allof_fanout.json", "/definitions/d"]),
    );
}

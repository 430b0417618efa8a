//! The shipped C++ grammar against the real compiler, `g++ -std=c++17 -fsyntax-only`
//! (`.ci/run` installs it where it is missing):
//! - directives: where a `#` line may stand and what it may include, both ways (lacuna accepts
//!   exactly what g++ accepts among these programs);
//! - the corpus: every HumanEval-X program lacuna accepts, g++ accepts too.

mod corpus;

use lacuna::checker::Checker;

/// Whether g++ accepts `src`; g++ must be installed.
fn gpp_accepts(src: &str) -> bool {
    corpus::gpp_accepts(src).expect("g++ runs (apt-get install g++)")
}

#[test]
fn directives_stand_where_gpp_takes_them() {
    let mut checker = Checker::from_spec("cpp").unwrap();
    let main = "int main() { return 0; }\n";
    let heads = [
        "#include<vector>\n",
        "#include <stdio.h>\n#include<bits/stdc++.h>\n",
        "\n\n#include<map>\n\n#include<cmath>\n",
        "  #include<string>\n",
        "#define N 10\n#undef N\n",
        "#pragma once\n",
        "int x; // note\n#include<set>\n",
        "/* a */\n#include<list>\n",
        // Refused by both.
        "#include<>\n",
        "#include \"my_header_that_is_not_there.h\"\n",
        "#include<stdio.h#include#. namespace>\n",
        "#include<boost_not_installed/any.hpp>\n",
        "int x; #include<vector>\n",
        "int y; /* a\n */ #include<map>\n",
        "int z; #define M 1\n",
    ];
    for head in heads {
        let src = format!("{head}{main}");
        let ours = checker.accepts(src.as_bytes());
        assert_eq!(ours, gpp_accepts(&src), "lacuna says {ours} for:\n{src}");
    }
}

#[test]
fn corpus_programs_lacuna_accepts_compile() {
    let tasks = corpus::humaneval_cpp();
    let mut checker = Checker::from_spec("cpp").unwrap();
    // A seeded sample of 40 tasks (g++ takes about a quarter of a second per program).
    let mut rng = corpus::Rng(0x5EED_0009);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..40 {
        let t = &tasks[rng.below(tasks.len())];
        let program = format!("{}{}", t.prompt, t.solution);
        if checker.accepts(program.as_bytes()) {
            accepted += 1;
            assert!(
                gpp_accepts(&program),
                "{}: g++ refuses what lacuna accepts",
                t.id
            );
        } else {
            refused += 1;
        }
    }
    assert!(accepted >= 35, "{accepted} accepted, {refused} refused");
}

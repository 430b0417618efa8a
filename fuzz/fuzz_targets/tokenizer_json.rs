//! A `tokenizer.json` file → vocabulary reader.
#![no_main]

use lacuna::vocab::Vocabulary;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = Vocabulary::from_tokenizer_json(data, &[], "fuzz/tokenizer.json") {
        assert!(v.len() > 0);
    }
});

//! A `lacuna check` input line → canvas line parser → text with holes.
#![no_main]

use lacuna::canvas::parse_canvas_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(line) = parse_canvas_line(text) {
        let holey = line.canvas.holey_text();
        assert!(!holey.chunks.is_empty());
    }
});

use lacuna::canvas::parse_canvas_line;
use lacuna::checker::Checker;
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let reps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(20);
    let text = std::fs::read_to_string(path).unwrap();
    let mut checkers = std::collections::HashMap::new();
    for line in text.lines() {
        let p = parse_canvas_line(line).unwrap();
        let spec = p.grammar.clone().unwrap();
        let ch = checkers
            .entry(spec.clone())
            .or_insert_with(|| Checker::from_spec(&spec).unwrap());
        let first = ch.check(&p.canvas);
        let t = Instant::now();
        for _ in 0..reps {
            ch.check(&p.canvas);
        }
        let warm = t.elapsed().as_micros() as f64 / reps as f64;
        println!(
            "{} {:?} cold {}us warm {:.0}us states {} items {}",
            p.id, first.verdict, first.micros, warm, first.dfa_states, first.items
        );
    }
}

//! `lacuna eval tables`: the scored records as the paper's Table 2 (syntax and functional
//! correctness per model, task and method) and Table 4 (time per output), in Markdown and CSV.
//!
//! A cell is the mean over seeds of the per-seed percentage, ± the half-width of a two-sided
//! 95% Student-t interval (t(0.975, n−1) · s / √n, s the sample standard deviation; the paper's
//! script uses t(0.95, n−1), a two-sided 90% interval: PROTOCOL 2.5). With one seed there is no
//! interval. Where the paper reports the same model and column, its value follows in brackets.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use super::records::{read_jsonl, ScoredRecord, Verdicts};

#[derive(Args, Debug)]
pub struct TablesArgs {
    /// Folder of scored result files (`*.scored.jsonl`).
    #[arg(long)]
    results: PathBuf,
    /// Folder for the tables (`dlm.md`, `dlm.csv`, `cost.md`, `cost.csv`).
    #[arg(long)]
    out: PathBuf,
}

/// The paper's Table 2 (PROTOCOL 5): model, metric, task, column (van, gp, con-, con) → %.
const PAPER_TABLE2: &[(&str, &str, &str, [f64; 4])] = &[
    ("Dream 7B", "syntax", "dlm-cpp", [40.5, 48.6, 58.7, 99.4]),
    ("Dream 7B", "syntax", "dlm-json", [22.4, 15.7, 44.9, 100.0]),
    ("Dream 7B", "syntax", "dlm-smiles", [67.7, 84.2, 93.7, 99.4]),
    (
        "DreamCoder 7B",
        "syntax",
        "dlm-cpp",
        [11.0, 9.1, 19.0, 99.2],
    ),
    (
        "DreamCoder 7B",
        "syntax",
        "dlm-json",
        [73.7, 73.3, 86.6, 100.0],
    ),
    (
        "DreamCoder 7B",
        "syntax",
        "dlm-smiles",
        [73.1, 82.1, 94.9, 100.0],
    ),
    ("LLaDA 8B", "syntax", "dlm-cpp", [13.3, 6.7, 36.1, 99.7]),
    ("LLaDA 8B", "syntax", "dlm-json", [77.5, 76.0, 89.0, 100.0]),
    (
        "LLaDA 8B",
        "syntax",
        "dlm-smiles",
        [58.2, 67.4, 91.3, 100.0],
    ),
    (
        "DiffuCoder 7B",
        "syntax",
        "dlm-cpp",
        [39.2, 33.1, 54.7, 99.7],
    ),
    (
        "DiffuCoder 7B",
        "syntax",
        "dlm-json",
        [64.5, 44.9, 76.3, 100.0],
    ),
    (
        "DiffuCoder 7B",
        "syntax",
        "dlm-smiles",
        [69.3, 57.3, 92.2, 99.1],
    ),
    ("Dream 7B", "functional", "dlm-cpp", [6.6, 11.6, 8.8, 9.5]),
    ("Dream 7B", "functional", "dlm-json", [7.4, 6.6, 11.4, 14.3]),
    ("Dream 7B", "functional", "dlm-smiles", [0.6, 2.7, 1.1, 1.1]),
    (
        "DreamCoder 7B",
        "functional",
        "dlm-cpp",
        [3.7, 0.6, 4.9, 5.2],
    ),
    (
        "DreamCoder 7B",
        "functional",
        "dlm-json",
        [44.6, 46.2, 46.7, 46.7],
    ),
    (
        "DreamCoder 7B",
        "functional",
        "dlm-smiles",
        [3.4, 1.2, 3.4, 3.4],
    ),
    ("LLaDA 8B", "functional", "dlm-cpp", [3.8, 2.0, 5.0, 5.3]),
    (
        "LLaDA 8B",
        "functional",
        "dlm-json",
        [43.1, 50.2, 49.5, 49.5],
    ),
    ("LLaDA 8B", "functional", "dlm-smiles", [0.7, 0.6, 1.0, 1.0]),
    (
        "DiffuCoder 7B",
        "functional",
        "dlm-cpp",
        [12.5, 7.6, 13.7, 14.8],
    ),
    (
        "DiffuCoder 7B",
        "functional",
        "dlm-json",
        [34.3, 21.0, 38.0, 38.2],
    ),
    (
        "DiffuCoder 7B",
        "functional",
        "dlm-smiles",
        [1.1, 0.6, 1.1, 1.1],
    ),
];

/// The paper's name for a checkpoint folder's model, if it is one of its four (the folder
/// named as on the Hugging Face hub: `Dream-v0-Instruct-7B`, `Dream-Coder-v0-Instruct-7B`,
/// `LLaDA-8B-Instruct`, `DiffuCoder-7B-Instruct`).
fn paper_model(model: &str) -> Option<&'static str> {
    let m = model.to_ascii_lowercase();
    [
        ("dream-coder-v0-instruct-7b", "DreamCoder 7B"),
        ("dream-v0-instruct-7b", "Dream 7B"),
        ("llada-8b-instruct", "LLaDA 8B"),
        ("diffucoder-7b-instruct", "DiffuCoder 7B"),
    ]
    .iter()
    .find(|(folder, _)| m.contains(folder))
    .map(|&(_, name)| name)
}

/// The table's columns: (mode, which text) and the paper's column it matches.
const COLUMNS: &[(&str, bool, &str, Option<usize>)] = &[
    ("van", false, "Van.", Some(0)),
    ("gp", false, "G.P.", Some(1)),
    ("reject", false, "reject Con.⁻", Some(2)),
    ("reject", true, "reject Con.", Some(3)),
    ("mask", false, "mask Con.⁻", None),
    ("mask", true, "mask Con.", None),
    ("mask-eager", false, "mask-eager Con.⁻", None),
    ("mask-eager", true, "mask-eager Con.", None),
    ("native", false, "native Con.⁻", None),
    ("native", true, "native Con.", None),
    ("native-van", false, "native Van.", None),
];

/// The two-sided 95% Student-t quantile for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

/// Mean and 95% half-width of per-seed values (no half-width for one seed).
pub fn mean_ci(values: &[f64]) -> (f64, Option<f64>) {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, None);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, Some(t975(n - 1) * var.sqrt() / (n as f64).sqrt()))
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A table row's metric: its label, the paper's metric it matches, and the verdict it counts.
type Metric = (&'static str, &'static str, fn(&Verdicts) -> bool);

/// Scored records by (task, model, mode), then by seed.
type Groups = BTreeMap<(String, String, String), BTreeMap<u64, Vec<ScoredRecord>>>;

fn read_groups(dir: &Path) -> Result<Groups, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".scored.jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{}: no *.scored.jsonl files (run `lacuna eval score` first)",
            dir.display()
        ));
    }
    let mut groups = Groups::new();
    for f in files {
        for r in read_jsonl::<ScoredRecord>(&f)? {
            let key = (
                r.record.task.clone(),
                r.record.model.clone(),
                r.record.mode.clone(),
            );
            groups
                .entry(key)
                .or_default()
                .entry(r.record.seed)
                .or_default()
                .push(r);
        }
    }
    Ok(groups)
}

/// Percent of `records` for which `pass` holds.
fn percent(records: &[ScoredRecord], pass: impl Fn(&ScoredRecord) -> bool) -> f64 {
    100.0 * records.iter().filter(|r| pass(r)).count() as f64 / records.len().max(1) as f64
}

fn cell(values: &[f64], digits: usize) -> String {
    match mean_ci(values) {
        (m, Some(h)) => format!("{m:.digits$} ± {h:.digits$}"),
        (m, None) => format!("{m:.digits$}"),
    }
}

pub fn run(args: TablesArgs) -> Result<bool, String> {
    let groups = read_groups(&args.results)?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let tasks: BTreeSet<String> = groups.keys().map(|k| k.0.clone()).collect();
    let models: BTreeSet<String> = groups.keys().map(|k| k.1.clone()).collect();
    let modes: BTreeSet<String> = groups.keys().map(|k| k.2.clone()).collect();
    let columns: Vec<_> = COLUMNS.iter().filter(|c| modes.contains(c.0)).collect();

    // Table 2: one row per model and metric, one column group per task.
    let metrics: [Metric; 3] = [
        ("syntax (oracle)", "syntax", |v| v.syntax_oracle),
        ("syntax (grammar)", "syntax", |v| v.syntax_grammar),
        ("functional", "functional", |v| v.functional),
    ];
    let mut md = String::new();
    let mut csv = String::from("task,model,metric,column,mean,ci95,seeds,items,paper\n");
    writeln!(
        md,
        "# DLM: syntactic and functional correctness (%)\n\nMean over seeds ± 95% interval \
         half-width; [the paper's value] where it reports this model and column. Syntax \
         (oracle): g++ -fsyntax-only, the jsonschema crate, RDKit; syntax (grammar): lacuna's \
         grammar for the task. Con.⁻ is the text the model wrote; Con. adds the grammar's \
         completion where one was needed.\n"
    )
    .ok();
    for task in &tasks {
        writeln!(md, "## {task}\n").ok();
        let mut header = String::from("| model | metric | items × seeds |");
        let mut rule = String::from("|---|---|---|");
        for c in &columns {
            write!(header, " {} |", c.2).ok();
            rule.push_str("---|");
        }
        writeln!(md, "{header}\n{rule}").ok();
        for model in &models {
            for (label, paper_metric, pass) in &metrics {
                let mut row = String::new();
                let mut shape = String::new();
                for c in &columns {
                    let Some(seeds) = groups.get(&(task.clone(), model.clone(), c.0.to_string()))
                    else {
                        row.push_str(" – |");
                        continue;
                    };
                    let values: Vec<f64> = seeds
                        .values()
                        .map(|rs| percent(rs, |r| pass(if c.1 { &r.con } else { &r.con_minus })))
                        .collect();
                    let items = seeds.values().map(Vec::len).max().unwrap_or(0);
                    shape = format!("{items} × {}", seeds.len());
                    let paper = paper_model(model).and_then(|pm| {
                        let col = c.3?;
                        PAPER_TABLE2
                            .iter()
                            .find(|p| p.0 == pm && p.1 == *paper_metric && p.2 == task)
                            .map(|p| p.3[col])
                    });
                    // The paper's syntax is its grammar's; show it beside the grammar row.
                    let paper = paper.filter(|_| *label != "syntax (oracle)");
                    let (m, h) = mean_ci(&values);
                    write!(row, " {}", cell(&values, 1)).ok();
                    if let Some(p) = paper {
                        write!(row, " [{p:.1}]").ok();
                    }
                    row.push_str(" |");
                    writeln!(
                        csv,
                        "{task},{model},{label},{},{m:.3},{},{},{items},{}",
                        c.2,
                        h.map_or(String::new(), |h| format!("{h:.3}")),
                        seeds.len(),
                        paper.map_or(String::new(), |p| p.to_string())
                    )
                    .ok();
                }
                writeln!(md, "| {model} | {label} | {shape} |{row}").ok();
            }
        }
        md.push('\n');
    }
    write_file(&args.out.join("dlm.md"), &md)?;
    write_file(&args.out.join("dlm.csv"), &csv)?;

    // Table 4 and the costs: time per output, overhead against Van. paired by item, rejections
    // and completion use.
    let mut md = String::from(
        "# DLM: cost per output\n\nMedian seconds per output (generation, completion included); \
         overhead: per seed, the median over items of (t − t_Van.) and of (t / t_Van. − 1), \
         paired by item, then the mean over seeds (the paper's Table 4 definition, with the \
         completion's time included); rejections: mean per output; completed: % of outputs \
         the grammar's completion finished; bytes: mean completion bytes per output; ms / token: \
         the median over items of milliseconds per generated token (the paper's Table 3 \
         measure for infilling), and its overhead against Van. paired the same way.\n\n\
         | task | model | mode | items × seeds | s / output | overhead s | overhead % | \
         ms / token | overhead ms / token | rejections | completed % | bytes | failed |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut csv = String::from(
        "task,model,mode,seeds,median_s,overhead_s,overhead_pct,ms_per_token,overhead_ms_per_token,rejections,completed_pct,completion_bytes,failed\n",
    );
    for ((task, model, mode), seeds) in &groups {
        let van = groups.get(&(task.clone(), model.clone(), "van".to_string()));
        let seconds = |r: &ScoredRecord| r.record.t_total;
        let ms_per_token =
            |r: &ScoredRecord| 1e3 * r.record.t_total / r.record.generated_tokens.max(1) as f64;
        let per_seed = |metric: &dyn Fn(&ScoredRecord) -> f64| -> Vec<f64> {
            seeds
                .values()
                .map(|rs| median(rs.iter().map(metric).collect()))
                .collect()
        };
        let per_seed_median = per_seed(&seconds);
        let per_token = per_seed(&ms_per_token);
        let (diff, ratio) = paired(seeds, van.filter(|_| mode != "van"), &seconds);
        let (token_diff, _) = paired(seeds, van.filter(|_| mode != "van"), &ms_per_token);
        let all: Vec<&ScoredRecord> = seeds.values().flatten().collect();
        let n = all.len().max(1) as f64;
        let rejections = all.iter().map(|r| r.record.rejections as f64).sum::<f64>() / n;
        let completed = 100.0 * all.iter().filter(|r| r.record.completed).count() as f64 / n;
        let bytes = all
            .iter()
            .map(|r| r.record.completion_bytes as f64)
            .sum::<f64>()
            / n;
        let failed = all.iter().filter(|r| r.record.error.is_some()).count();
        let items = seeds.values().map(Vec::len).max().unwrap_or(0);
        let opt = |v: &[f64], d: usize| {
            if v.is_empty() {
                "–".to_string()
            } else {
                cell(v, d)
            }
        };
        writeln!(
            md,
            "| {task} | {model} | {mode} | {items} × {} | {} | {} | {} | {} | {} | \
             {rejections:.1} | {completed:.1} | {bytes:.1} | {failed} |",
            seeds.len(),
            cell(&per_seed_median, 3),
            opt(&diff, 3),
            opt(&ratio, 0),
            cell(&per_token, 1),
            opt(&token_diff, 1),
        )
        .ok();
        writeln!(
            csv,
            "{task},{model},{mode},{},{:.4},{},{},{:.3},{},{rejections:.2},{completed:.2},\
             {bytes:.2},{failed}",
            seeds.len(),
            mean_ci(&per_seed_median).0,
            if diff.is_empty() {
                String::new()
            } else {
                format!("{:.4}", mean_ci(&diff).0)
            },
            if ratio.is_empty() {
                String::new()
            } else {
                format!("{:.2}", mean_ci(&ratio).0)
            },
            mean_ci(&per_token).0,
            if token_diff.is_empty() {
                String::new()
            } else {
                format!("{:.3}", mean_ci(&token_diff).0)
            },
        )
        .ok();
    }
    write_file(&args.out.join("cost.md"), &md)?;
    write_file(&args.out.join("cost.csv"), &csv)?;
    eprintln!("{}: dlm.md, dlm.csv, cost.md, cost.csv", args.out.display());
    Ok(true)
}

/// Per seed, the median over items of (x − x_Van.) and of (x / x_Van. − 1) in %, items
/// paired by id (the paper's Tables 3 and 4).
fn paired(
    seeds: &BTreeMap<u64, Vec<ScoredRecord>>,
    van: Option<&BTreeMap<u64, Vec<ScoredRecord>>>,
    metric: &dyn Fn(&ScoredRecord) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut diff, mut ratio) = (Vec::new(), Vec::new());
    let Some(van) = van else {
        return (diff, ratio);
    };
    for (seed, rs) in seeds {
        let Some(vrs) = van.get(seed) else { continue };
        let base: BTreeMap<&str, f64> = vrs
            .iter()
            .map(|r| (r.record.id.as_str(), metric(r)))
            .collect();
        let pairs: Vec<(f64, f64)> = rs
            .iter()
            .filter_map(|r| base.get(r.record.id.as_str()).map(|&b| (metric(r), b)))
            .collect();
        if !pairs.is_empty() {
            diff.push(median(pairs.iter().map(|(t, b)| t - b).collect()));
            ratio.push(median(
                pairs.iter().map(|(t, b)| 100.0 * (t / b - 1.0)).collect(),
            ));
        }
    }
    (diff, ratio)
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_students_t_at_95_percent_two_sided() {
        // Four seeds: t(0.975, 3) = 3.182; s of 10, 20, 30, 40 is 12.91; half-width 20.54.
        let (m, h) = mean_ci(&[10.0, 20.0, 30.0, 40.0]);
        assert!((m - 25.0).abs() < 1e-9);
        assert!((h.unwrap() - 3.182 * 12.909944 / 2.0).abs() < 1e-3);
        assert_eq!(mean_ci(&[5.0]), (5.0, None));
    }

    #[test]
    fn checkpoint_folders_map_to_the_papers_models() {
        assert_eq!(paper_model("Dream-v0-Instruct-7B"), Some("Dream 7B"));
        assert_eq!(
            paper_model("Dream-Coder-v0-Instruct-7B"),
            Some("DreamCoder 7B")
        );
        assert_eq!(paper_model("LLaDA-8B-Instruct"), Some("LLaDA 8B"));
        assert_eq!(paper_model("DiffuCoder-7B-Instruct"), Some("DiffuCoder 7B"));
        assert_eq!(paper_model("default"), None);
        assert_eq!(paper_model("dream-tiny"), None);
    }
}

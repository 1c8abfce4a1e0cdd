//! WBest's testbed with collision-triggered rate fallback (the paper's App. D, Figs. 27–29):
//! the ground truth of the UDP cases with every node at a fixed 54 Mbit/s (Table I's testbed)
//! and with every node running ARF (`ra=arf`), three seeds each, beside the paper's.
//!
//! `cargo run --release -p wisp-sim --example wbest_collision_fallback`

use wisp_sim::probing::{Case, ground_truth};

fn main() {
    println!("case  fixed 54 Mbit/s (seeds 1-3)   ARF (seeds 1-3)            paper");
    for id in [0, 1, 2, 5, 6, 9] {
        let mut case = Case::table1(id).expect("a case of Table I");
        let fixed: Vec<f64> = (1..=3).map(|s| ground_truth(&case, s)).collect();
        case.collision_fallback = true;
        let arf: Vec<f64> = (1..=3).map(|s| ground_truth(&case, s)).collect();
        let paper = case
            .paper_ground_truth()
            .map_or("unknown".to_string(), |g| format!("{g:.2}"));
        let row = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!("{id:>4}  {:<28}  {:<25}  {paper}", row(&fixed), row(&arf));
    }
}

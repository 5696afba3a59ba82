//! One realistic explanation: 5 sentences, 10 facts, 3 contradiction ids.
//! Target: at most 50 µs per explanation.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use oracle::{Case, Expected, Verdict, check};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn explanation() -> Case {
    Case {
        id: "bench".to_owned(),
        facts: strings(&[
            "You are eligible for the Karnataka Old Age Pension",
            "Your age is 68",
            "The minimum age is 65",
            "Your annual income is ₹1.8 lakh",
            "The income limit is ₹2.5 lakh",
            "You are a resident of Karnataka",
            "Residence in Karnataka is required",
            "You do not receive another government pension",
            "The monthly benefit is ₹1,200",
            "The benefit is paid by direct benefit transfer",
        ]),
        candidate_output: "You are eligible for the Karnataka Old Age Pension. \
            Your age is 68, and the minimum age is 65.  Your annual income is ₹1.8 lakh! \
            The income limit is ₹2.5 lakh. The monthly benefit is ₹1,200."
            .to_owned(),
        expected: Expected {
            must_find: strings(&["Karnataka Old Age Pension", "₹1,200"]),
            must_not_find: strings(&["guaranteed", "not eligible"]),
            contradiction_ids: strings(&["true_false", "above_below", "valid_invalid"]),
        },
        ..Case::default()
    }
}

fn bench(c: &mut Criterion) {
    let case = explanation();
    assert_eq!(
        check(&case).verdict,
        Verdict::Pass,
        "the benchmark case must pass"
    );
    c.bench_function("check: 5 sentences, 10 facts, 3 contradiction ids", |b| {
        b.iter(|| check(black_box(&case)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

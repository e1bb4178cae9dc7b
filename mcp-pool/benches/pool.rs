//! Pool benchmarks (written with the pool).

fn main() {}

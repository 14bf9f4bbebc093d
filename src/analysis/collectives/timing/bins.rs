//! The bins of the wait distributions: 1-2-5 histogram bin edges.

/// The 1-2-5 bin edge at or below `x` (> 0).
pub(super) fn bin_floor(x: u64) -> u64 {
    let mut decade = 1u64;
    while decade <= x / 10 {
        decade *= 10;
    }
    [5, 2, 1]
        .into_iter()
        .map(|m| m * decade)
        .find(|&e| e <= x)
        .unwrap_or(decade)
}

/// The 1-2-5 edge after `edge`.
pub(super) fn bin_next(edge: u64) -> u64 {
    let mut decade = 1u64;
    while decade <= edge / 10 {
        decade *= 10;
    }
    match edge / decade {
        1 => 2 * decade,
        2 => 5 * decade,
        _ => decade.saturating_mul(10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_1_2_5() {
        assert_eq!(bin_floor(1), 1);
        assert_eq!(bin_floor(3), 2);
        assert_eq!(bin_floor(9), 5);
        assert_eq!(bin_floor(10), 10);
        assert_eq!(bin_floor(1_999_999), 1_000_000);
        assert_eq!(bin_floor(2_000_000), 2_000_000);
        assert_eq!(bin_next(1), 2);
        assert_eq!(bin_next(2), 5);
        assert_eq!(bin_next(5), 10);
        assert_eq!(bin_next(500_000), 1_000_000);
    }
}

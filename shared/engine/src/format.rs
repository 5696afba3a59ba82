//! Plain-language formatting shared by gap descriptions and explanations.

/// Indian digit grouping: 150000 → "1,50,000"; fractions kept to two places when present.
pub fn indian_number(value: f64) -> String {
    let negative = value < 0.0;
    let abs = value.abs();
    let whole = abs.trunc() as u64;
    let digits = whole.to_string();
    let grouped = if digits.len() <= 3 {
        digits
    } else {
        let (head, last3) = digits.split_at(digits.len() - 3);
        let mut groups: Vec<&str> = Vec::new();
        let mut end = head.len();
        while end > 2 {
            groups.push(&head[end - 2..end]);
            end -= 2;
        }
        groups.push(&head[..end]);
        groups.reverse();
        format!("{},{last3}", groups.join(","))
    };
    let fraction = abs - abs.trunc();
    let fraction = if fraction > 0.0 {
        format!("{:.2}", fraction)
            .trim_start_matches('0')
            .to_string()
    } else {
        String::new()
    };
    format!("{}{grouped}{fraction}", if negative { "-" } else { "" })
}

/// Rupees in Indian format: ₹1,50,000.
pub fn rupees(value: f64) -> String {
    format!("₹{}", indian_number(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indian_grouping() {
        assert_eq!(rupees(150000.0), "₹1,50,000");
        assert_eq!(rupees(2000.0), "₹2,000");
        assert_eq!(rupees(999.0), "₹999");
        assert_eq!(rupees(12345678.0), "₹1,23,45,678");
        assert_eq!(rupees(1000000000.0), "₹1,00,00,00,000");
        assert_eq!(indian_number(2.5), "2.50");
    }
}

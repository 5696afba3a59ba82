//! Plain-language formatting shared by gap descriptions and explanations.

/// Indian digit grouping: 150000 → "1,50,000"; fractions kept to two places when present.
pub fn indian_number(value: f64) -> String {
    let negative = value < 0.0;
    // Rounded to paise first, so that a carry reaches the whole part (2.999 → 3).
    let paise = (value.abs() * 100.0).round() as u64;
    let (whole, fraction) = (paise / 100, paise % 100);
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
    let fraction = if fraction > 0 {
        format!(".{fraction:02}")
    } else {
        String::new()
    };
    let negative = negative && paise > 0;
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

    #[test]
    fn rounding_carries_into_the_whole_part() {
        assert_eq!(indian_number(2.999), "3");
        assert_eq!(indian_number(0.999), "1");
        assert_eq!(indian_number(150000.004), "1,50,000");
        assert_eq!(indian_number(99999.995), "1,00,000");
        assert_eq!(indian_number(-0.001), "0");
        assert_eq!(indian_number(-1234.5), "-1,234.50");
    }
}

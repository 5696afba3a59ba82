//! Plain-language formatting shared by gap descriptions and explanations.

use std::fmt;

/// Indian digit grouping: 150000 → "1,50,000"; fractions kept to two places when present.
pub fn indian_number(value: f64) -> String {
    IndianNumber(value).to_string()
}

/// Rupees in Indian format: ₹1,50,000.
pub fn rupees(value: f64) -> String {
    Rupees(value).to_string()
}

/// [`indian_number`] as a `Display`, so that a longer text can be written in one buffer.
#[derive(Debug, Clone, Copy)]
pub struct IndianNumber(pub f64);

/// [`rupees`] as a `Display`.
#[derive(Debug, Clone, Copy)]
pub struct Rupees(pub f64);

impl fmt::Display for IndianNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Rounded to paise first, so that a carry reaches the whole part (2.999 → 3).
        let paise = (self.0.abs() * 100.0).round() as u64;
        let (whole, fraction) = (paise / 100, paise % 100);
        if self.0 < 0.0 && paise > 0 {
            f.write_str("-")?;
        }
        let mut buffer = [0u8; 20];
        let digits = decimal_digits(whole, &mut buffer);
        // The last three digits form one group; before them, groups of two.
        let head = digits.len().saturating_sub(3);
        let mut start = 0;
        for comma in (head % 2..=head).step_by(2).filter(|&c| c > 0) {
            f.write_str(ascii(&digits[start..comma]))?;
            f.write_str(",")?;
            start = comma;
        }
        f.write_str(ascii(&digits[start..]))?;
        if fraction > 0 {
            write!(f, ".{fraction:02}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Rupees {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "₹{}", IndianNumber(self.0))
    }
}

/// The decimal digits of `n`, most significant first, in the tail of `buffer`.
fn decimal_digits(mut n: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buffer[start..];
        }
    }
}

fn ascii(digits: &[u8]) -> &str {
    std::str::from_utf8(digits).expect("decimal digits are ASCII")
}

/// A date as citizens read it in English: "1 January 1960" (outputs keep ISO dates; texts
/// never show them).
pub struct LongDate(pub crate::date::Date);

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

impl fmt::Display for LongDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let date = self.0;
        write!(
            f,
            "{} {} {}",
            date.day(),
            MONTHS[usize::from(date.month()) - 1],
            date.year()
        )
    }
}

/// A number with a catalogue unit, in English words: "1 acre", "2.50 hectares", "3,600 units
/// of electricity a year" (the same words as `shared/explain/languages/en.yaml` `units`, which
/// a test holds equal). Money is [`Rupees`]; a unit this does not know is written after the
/// number as it is.
pub struct Quantity<'a>(pub f64, pub &'a str);

impl fmt::Display for Quantity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Quantity(number, unit) = *self;
        let one = number == 1.0;
        let words = match unit {
            "years" => Some(if one { "year" } else { "years" }),
            "percent" => Some("percent"),
            "hectares" => Some(if one { "hectare" } else { "hectares" }),
            "acres" => Some(if one { "acre" } else { "acres" }),
            "kWh/year" => Some(if one {
                "unit of electricity a year"
            } else {
                "units of electricity a year"
            }),
            _ => None,
        };
        write!(f, "{} {}", IndianNumber(number), words.unwrap_or(unit))
    }
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
        assert_eq!(indian_number(0.0), "0");
        assert_eq!(indian_number(12.0), "12");
        assert_eq!(indian_number(1234.0), "1,234");
        assert_eq!(indian_number(123456.07), "1,23,456.07");
        assert_eq!(indian_number(12345.0), "12,345");
        assert_eq!(indian_number(1234567.0), "12,34,567");
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

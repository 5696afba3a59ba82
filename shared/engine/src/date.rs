//! Calendar dates as the engine uses them: parsed strictly from `YYYY-MM-DD`, compared as day numbers.

use std::fmt;
use time::Month;

/// A calendar date. Ordered; printed as `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(time::Date);

impl Date {
    /// Parses exactly `YYYY-MM-DD` (no time, no offset).
    pub fn parse(text: &str) -> Option<Date> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<i32> {
            let part = &text[range];
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let month = Month::try_from(u8::try_from(number(5..7)?).ok()?).ok()?;
        let day = u8::try_from(number(8..10)?).ok()?;
        time::Date::from_calendar_date(number(0..4)?, month, day)
            .ok()
            .map(Date)
    }

    pub fn from_ymd(year: i32, month: u8, day: u8) -> Option<Date> {
        time::Date::from_calendar_date(year, Month::try_from(month).ok()?, day)
            .ok()
            .map(Date)
    }

    /// Days since 1970-01-01: the form dates take in columns and kernels.
    pub fn day_number(self) -> i64 {
        i64::from(self.0.to_julian_day()) - 2_440_588
    }

    pub fn from_day_number(days: i64) -> Option<Date> {
        let julian = i32::try_from(days + 2_440_588).ok()?;
        time::Date::from_julian_day(julian).ok().map(Date)
    }

    pub fn year(self) -> i32 {
        self.0.year()
    }

    pub fn month(self) -> u8 {
        self.0.month() as u8
    }

    pub fn day(self) -> u8 {
        self.0.day()
    }

    /// `YYYY-MM-DD` as bytes, for years 0 to 9999 (every date a rule or profile can spell):
    /// evaluation ids hash it once per evaluation, without the `fmt` machinery.
    pub fn iso(self) -> Option<[u8; 10]> {
        let year = u16::try_from(self.year()).ok().filter(|&y| y <= 9999)?;
        let digit = |n: u16| b'0' + (n % 10) as u8;
        let (month, day) = (u16::from(self.month()), u16::from(self.day()));
        Some([
            digit(year / 1000),
            digit(year / 100),
            digit(year / 10),
            digit(year),
            b'-',
            digit(month / 10),
            digit(month),
            b'-',
            digit(day / 10),
            digit(day),
        ])
    }

    /// `days` later (earlier when negative).
    pub fn plus_days(self, days: i64) -> Option<Date> {
        Date::from_day_number(self.day_number() + days)
    }

    /// The same month and day `years` later; 29 February becomes 1 March in a common year
    /// (the day a person born on 29 February completes a year of age there).
    pub fn add_years(self, years: i32) -> Option<Date> {
        let year = self.year().checked_add(years)?;
        Date::from_ymd(year, self.month(), self.day()).or_else(|| Date::from_ymd(year, 3, 1))
    }

    /// Whole years from `self` (a date of birth) to `on`: the age on that day, the birthday
    /// counted as reached on the day itself (29 February on 1 March in a common year, as
    /// [`Date::add_years`]); None before `self`.
    pub fn whole_years_to(self, on: Date) -> Option<i64> {
        if on < self {
            return None;
        }
        let mut years = on.year() - self.year();
        if self.add_years(years).is_none_or(|birthday| birthday > on) {
            years -= 1;
        }
        Some(i64::from(years))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.iso() {
            Some(text) => f.write_str(std::str::from_utf8(&text).expect("ASCII digits")),
            None => write!(
                f,
                "{:04}-{:02}-{:02}",
                self.year(),
                self.month(),
                self.day()
            ),
        }
    }
}

impl serde::Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A yearly month-day (`MM-DD`), used by application windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MonthDay {
    pub month: u8,
    pub day: u8,
}

impl MonthDay {
    pub fn parse(text: &str) -> Option<MonthDay> {
        let (m, d) = text.split_once('-')?;
        if m.len() != 2 || d.len() != 2 {
            return None;
        }
        let (month, day): (u8, u8) = (m.parse().ok()?, d.parse().ok()?);
        // 2024 is a leap year, so 02-29 is a valid month-day.
        Date::from_ymd(2024, month, day)?;
        Some(MonthDay { month, day })
    }

    pub fn of(date: Date) -> MonthDay {
        MonthDay {
            month: date.month(),
            day: date.day(),
        }
    }
}

impl fmt::Display for MonthDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}-{:02}", self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_age_on_a_day_counts_the_birthday_from_the_day_itself() {
        let d = |t| Date::parse(t).unwrap();
        let born = d("1965-01-20");
        assert_eq!(born.whole_years_to(d("2025-01-19")), Some(59));
        assert_eq!(born.whole_years_to(d("2025-01-20")), Some(60));
        assert_eq!(born.whole_years_to(born), Some(0));
        assert_eq!(born.whole_years_to(d("1965-01-19")), None);
        // Born on 29 February: the birthday is 1 March in a common year, 29 February in a leap one.
        let leap = d("1964-02-29");
        assert_eq!(leap.whole_years_to(d("2025-02-28")), Some(60));
        assert_eq!(leap.whole_years_to(d("2025-03-01")), Some(61));
        assert_eq!(leap.whole_years_to(d("2024-02-28")), Some(59));
        assert_eq!(leap.whole_years_to(d("2024-02-29")), Some(60));
    }

    #[test]
    fn parses_only_strict_dates() {
        assert_eq!(Date::parse("2025-01-15").unwrap().to_string(), "2025-01-15");
        for bad in [
            "2025-1-15",
            "2025-02-30",
            "2025-13-01",
            "20250115",
            "2025-01-15T00:00:00Z",
            "+025-01-15",
        ] {
            assert!(Date::parse(bad).is_none(), "{bad} should be refused");
        }
    }

    #[test]
    fn iso_bytes_spell_the_date_as_the_general_format_does() {
        let first = Date::from_ymd(0, 1, 1).unwrap().day_number();
        let last = Date::from_ymd(9999, 12, 31).unwrap().day_number();
        for days in (first..=last).step_by(97).chain([first, last]) {
            let date = Date::from_day_number(days).unwrap();
            let general = format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day());
            assert_eq!(
                date.iso().map(|b| String::from_utf8(b.to_vec()).unwrap()),
                Some(general)
            );
        }
        let before_year_zero = Date::from_ymd(-1, 12, 31).unwrap();
        assert_eq!(before_year_zero.iso(), None);
        assert_eq!(before_year_zero.to_string(), "-001-12-31");
    }

    #[test]
    fn day_numbers_round_trip() {
        let d = Date::parse("1970-01-01").unwrap();
        assert_eq!(d.day_number(), 0);
        let d = Date::parse("2028-02-29").unwrap();
        assert_eq!(Date::from_day_number(d.day_number()), Some(d));
    }

    #[test]
    fn leap_day_birthdays_fall_on_first_of_march() {
        let born = Date::parse("1960-02-29").unwrap();
        assert_eq!(born.add_years(65).unwrap().to_string(), "2025-03-01");
        assert_eq!(born.add_years(64).unwrap().to_string(), "2024-02-29");
    }
}

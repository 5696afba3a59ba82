//! Today's date, the one place the binary reads the clock for a date (the engine reads none:
//! every evaluation is given its `as_of`).

use engine::Date;

/// Today's date (UTC): the default `as_of` of the commands and the API.
pub fn today() -> Date {
    today_at_offset(0)
}

/// Today's date `offset_seconds` east of UTC.
pub fn today_at_offset(offset_seconds: i64) -> Date {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Date::from_day_number((seconds + offset_seconds).div_euclid(86_400))
        .expect("today is a valid date")
}

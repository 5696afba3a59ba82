//! What an input record asks the explainer for: the subject of a `new_match` or a
//! `partial_match` event (decoding and dead letters as every worker does: `fleet::input`).

use fleet::avro::Codec;
use fleet::events::{EligibilityNewMatch, EligibilityPartialMatch};
use fleet::input::{Record, Rejected};
use fleet::topics::{ELIGIBILITY_NEW_MATCH, ELIGIBILITY_PARTIAL_MATCH};

use super::explain::Subject;

/// The subject of an input record. A registry outage is retried; anything else is the record's
/// fault.
pub async fn decode(codec: &Codec, record: &Record) -> Result<Subject, Rejected> {
    match record.topic.as_str() {
        ELIGIBILITY_NEW_MATCH => fleet::input::decode::<EligibilityNewMatch>(codec, record)
            .await
            .map(|e| Subject::from_new_match(&e)),
        ELIGIBILITY_PARTIAL_MATCH => fleet::input::decode::<EligibilityPartialMatch>(codec, record)
            .await
            .map(|e| Subject::from_partial_match(&e)),
        other => Err(Rejected::validation(
            record,
            format!("{other} is not an explainer input"),
        )),
    }
}

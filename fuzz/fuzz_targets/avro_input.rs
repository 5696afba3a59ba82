//! Any bytes as the Avro body of each input topic's record (after the registry's 5-byte
//! header): decoded or refused, never a panic or an unbounded allocation.
#![no_main]

use std::sync::LazyLock;

use apache_avro::Schema;
use apache_avro::reader::datum::GenericDatumReader;
use libfuzzer_sys::fuzz_target;

static SCHEMAS: LazyLock<Vec<Schema>> = LazyLock::new(|| {
    [
        include_str!("../../schemas/avro/profile_update.avsc"),
        include_str!("../../schemas/avro/rules_update.avsc"),
        include_str!("../../schemas/avro/deadline_approaching.avsc"),
        include_str!("../../schemas/avro/eligibility_new_match.avsc"),
        include_str!("../../schemas/avro/eligibility_partial_match.avsc"),
    ]
    .iter()
    .map(|text| Schema::parse_str(text).expect("the project's schemas parse"))
    .collect()
});

fuzz_target!(|data: &[u8]| {
    for schema in SCHEMAS.iter() {
        let reader = GenericDatumReader::builder(schema)
            .build()
            .expect("the project's schemas resolve");
        let _ = reader.read_value(&mut &data[..]);
    }
});

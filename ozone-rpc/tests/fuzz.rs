//! Light fuzzing: the decoders never panic on arbitrary bytes, and encoding round-trips.

use std::net::SocketAddr;

use ozone_rpc::{
    decode_call_response, parse_suggested_leader, rpc, CallRecord, OmRequest, OmResponse,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = OmResponse::decode(&bytes);
        let _ = OmRequest::decode(&bytes);
        let _ = rpc::decode_response(&bytes);
        let _ = rpc::decode_request(&bytes);
        let _ = rpc::RpcResponseHeader::decode(&bytes);
        let _ = rpc::decode_connection_context(&bytes);
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let call = CallRecord::new([0; 16], 0, 0, &OmRequest::lookup_key("v", "b", "k"));
        let _ = decode_call_response(addr, &call, &bytes);
    }

    #[test]
    fn suggested_leader_parsing_never_panics(s in ".{0,200}", id in "[a-z0-9]{0,12}") {
        let _ = parse_suggested_leader(&s);
        let msg = format!("OM:om1 is not the leader. Suggested leader is OM:{id}{s}");
        let _ = parse_suggested_leader(&msg);
    }

    #[test]
    fn rename_round_trips(v in ".{0,40}", b in ".{0,40}", from in ".{0,200}", to in ".{0,200}",
                          call_id in 0..i32::MAX, retry in -1..100i32) {
        let mut req = OmRequest::rename_key(&v, &b, &from, &to);
        req.client_id = "c".into();
        prop_assert_eq!(OmRequest::decode(&req.encode()), Ok(req.clone()));
        let rec = CallRecord::new([7; 16], call_id, retry, &req);
        let parsed = rpc::decode_request(&rec.frame[4..]).unwrap();
        prop_assert_eq!(parsed.header.call_id, call_id);
        prop_assert_eq!(parsed.header.retry_count, retry);
        prop_assert_eq!(OmRequest::decode(&parsed.payload), Ok(req));
    }
}

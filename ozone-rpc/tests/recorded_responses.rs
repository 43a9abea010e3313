//! Decoding of responses written out by hand from RpcHeader.proto and OmClientProtocol.proto,
//! shaped as a Hadoop RPC server sends them (`Server.setupResponse`: callId, status,
//! serverIpcVersionNum, [exceptionClassName, errorMsg, errorDetail], clientId, retryCount; on an
//! error, errorMsg is the exception message followed by the server's stack trace). Message texts
//! other than OMNotLeaderException's are illustrative, not captured from a cluster.

use std::net::SocketAddr;

use ozone_rpc::{decode_call_response, CallRecord, CmdType, OmError, OmRequest, Outcome, Status};

const CLIENT_ID: [u8; 16] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
];

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn addr() -> SocketAddr {
    "127.0.0.1:9862".parse().unwrap()
}

fn rename_call() -> CallRecord {
    CallRecord::new(
        CLIENT_ID,
        0,
        0,
        &OmRequest::rename_key("vol", "bkt", "a", "b"),
    )
}

/// RpcResponseHeaderProto of a successful call 0, 26 bytes.
fn success_header() -> Vec<u8> {
    cat(&[
        &[0x08, 0x00], // callId (1) = 0
        &[0x10, 0x00], // status (2) = SUCCESS
        &[0x18, 0x09], // serverIpcVersionNum (3) = 9
        &[0x3a, 0x10], // clientId (7), 16 bytes
        &CLIENT_ID,
        &[0x40, 0x00], // retryCount (8) = 0 (sint32)
    ])
}

/// Strips and checks the 4-byte frame length.
fn body(frame: &[u8]) -> &[u8] {
    let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
    assert_eq!(len, frame.len() - 4);
    &frame[4..]
}

#[test]
fn rename_success() {
    let om_response = [
        0x08, 0x21, // cmdType (1) = RenameKey (33)
        0x18, 0x01, // success (3) = true
        0x28, 0x01, // status (5) = OK (1)
        0x8a, 0x02, 0x00, // renameKeyResponse (33), empty
    ];
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x25], // 1 + 26 + 1 + 9 = 37
        &[0x1a],
        &success_header(),
        &[0x09],
        &om_response,
    ]);
    let resp = decode_call_response(addr(), &rename_call(), body(&frame)).unwrap();
    assert_eq!(resp.cmd_type, CmdType::RENAME_KEY);
    assert_eq!(resp.status, Status::OK);
    assert!(resp.success);
    assert_eq!(resp.message, None);
    assert_eq!(resp.outcome(), Outcome::Ok);
}

#[test]
fn rename_key_already_exists() {
    let msg = b"Key already exists: b";
    assert_eq!(msg.len(), 0x15);
    let om_response = cat(&[
        &[0x08, 0x21], // cmdType (1) = RenameKey
        &[0x18, 0x00], // success (3) = false
        &[0x22, 0x15], // message (4), 21 bytes
        msg,
        &[0x28, 0x0b], // status (5) = KEY_ALREADY_EXISTS (11)
    ]);
    assert_eq!(om_response.len(), 0x1d);
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x39], // 1 + 26 + 1 + 29 = 57
        &[0x1a],
        &success_header(),
        &[0x1d],
        &om_response,
    ]);
    let resp = decode_call_response(addr(), &rename_call(), body(&frame)).unwrap();
    assert_eq!(resp.status, Status::KEY_ALREADY_EXISTS);
    assert_eq!(resp.status.name(), "KEY_ALREADY_EXISTS");
    assert!(!resp.success);
    assert_eq!(resp.message.as_deref(), Some("Key already exists: b"));
    assert_eq!(resp.outcome(), Outcome::Fail);
}

#[test]
fn lookup_key_carries_the_length() {
    let key_info = cat(&[
        &[0x0a, 0x03],
        b"vol", // volumeName (1)
        &[0x12, 0x03],
        b"bkt", // bucketName (2)
        &[0x1a, 0x01],
        b"k",                // keyName (3)
        &[0x20, 0x05],       // dataSize (4) = 5
        &[0x28, 0x01],       // type (5) = RATIS
        &[0x40, 0xe8, 0x07], // creationTime (8) = 1000
        &[0x48, 0xd0, 0x0f], // modificationTime (9) = 2000
        &[0x70, 0xac, 0x02], // objectID (14) = 300
        &[0x78, 0x07],       // updateID (15) = 7
    ]);
    assert_eq!(key_info.len(), 0x1c);
    let om_response = cat(&[
        &[0x08, 0x20],       // cmdType (1) = LookupKey (32)
        &[0x18, 0x01],       // success (3)
        &[0x28, 0x01],       // status (5) = OK
        &[0x82, 0x02, 0x1e], // lookupKeyResponse (32): tag 32<<3|2 = 258; 30 bytes
        &[0x12, 0x1c],       //   keyInfo (2), 28 bytes
        &key_info,
    ]);
    assert_eq!(om_response.len(), 0x27);
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x43], // 1 + 26 + 1 + 39 = 67
        &[0x1a],
        &success_header(),
        &[0x27],
        &om_response,
    ]);
    let call = CallRecord::new(CLIENT_ID, 0, 0, &OmRequest::lookup_key("vol", "bkt", "k"));
    let resp = decode_call_response(addr(), &call, body(&frame)).unwrap();
    assert_eq!(resp.key_length(), Some(5));
    let k = resp.key_info.unwrap();
    assert_eq!(
        (k.volume.as_str(), k.bucket.as_str(), k.key.as_str()),
        ("vol", "bkt", "k")
    );
    assert_eq!((k.creation_time, k.modification_time), (1000, 2000));
    assert_eq!((k.object_id, k.update_id), (Some(300), Some(7)));
}

/// A lookup of an hsync'd file that is still open: its KeyInfo carries metadata
/// `hsyncClientId` (KeyInfo field 11, hdds KeyValue { key = 1, value = 2 }).
#[test]
fn lookup_of_an_open_hsynced_file() {
    let key_value = cat(&[
        &[0x0a, 0x0d], // key (1), 13 bytes
        b"hsyncClientId",
        &[0x12, 0x02], // value (2)
        b"42",
    ]);
    assert_eq!(key_value.len(), 0x13);
    let key_info = cat(&[
        &[0x0a, 0x03],
        b"vol",
        &[0x12, 0x03],
        b"bkt",
        &[0x1a, 0x01],
        b"f",
        &[0x20, 0x64], // dataSize (4) = 100
        &[0x28, 0x01], // type (5) = RATIS
        &[0x40, 0x01], // creationTime (8)
        &[0x48, 0x02], // modificationTime (9)
        &[0x5a, 0x13], // metadata (11), 19 bytes
        &key_value,
    ]);
    assert_eq!(key_info.len(), 0x2a);
    let om_response = cat(&[
        &[0x08, 0x20],       // cmdType (1) = LookupKey (32)
        &[0x28, 0x01],       // status (5) = OK
        &[0x82, 0x02, 0x2c], // lookupKeyResponse (32), 44 bytes
        &[0x12, 0x2a],       //   keyInfo (2), 42 bytes
        &key_info,
    ]);
    assert_eq!(om_response.len(), 0x33);
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x4f], // 1 + 26 + 1 + 51 = 79
        &[0x1a],
        &success_header(),
        &[0x33],
        &om_response,
    ]);
    let call = CallRecord::new(CLIENT_ID, 0, 0, &OmRequest::lookup_key("vol", "bkt", "f"));
    let resp = decode_call_response(addr(), &call, body(&frame)).unwrap();
    let k = resp.key_info.unwrap();
    assert_eq!(k.data_size, 100);
    assert_eq!(k.metadata_value("hsyncClientId"), Some("42"));
    assert!(k.is_open());
    // Re-encoding keeps the metadata.
    assert_eq!(ozone_rpc::KeyInfo::decode(&k.encode()).unwrap(), k);
}

/// A recoverLease inside the soft limit: KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD (97), a failure.
#[test]
fn recover_lease_inside_the_soft_limit() {
    let om_response = cat(&[
        &[0x08, 0x77], // cmdType (1) = RecoverLease (119)
        &[0x18, 0x00], // success (3) = false
        &[0x22, 0x0b], // message (4)
        b"inside soft",
        &[0x28, 0x61], // status (5) = 97
    ]);
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x2f], // 1 + 26 + 1 + 19 = 47
        &[0x1a],
        &success_header(),
        &[0x13],
        &om_response,
    ]);
    assert_eq!(om_response.len(), 0x13);
    let call = CallRecord::new(
        CLIENT_ID,
        0,
        0,
        &OmRequest::recover_lease("vol", "bkt", "f", false),
    );
    let resp = decode_call_response(addr(), &call, body(&frame)).unwrap();
    assert_eq!(resp.status, Status::KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD);
    assert_eq!(resp.status.name(), "KEY_UNDER_LEASE_SOFT_LIMIT_PERIOD");
    assert_eq!(resp.outcome(), Outcome::Fail);
}

fn error_frame(class: &[u8], msg: &[u8]) -> Vec<u8> {
    let mut msg_len = Vec::new();
    ozone_rpc::pb::put_varint(&mut msg_len, msg.len() as u64);
    let header = cat(&[
        &[0x08, 0x00],              // callId (1) = 0
        &[0x10, 0x01],              // status (2) = ERROR
        &[0x18, 0x09],              // serverIpcVersionNum (3) = 9
        &[0x22, class.len() as u8], // exceptionClassName (4)
        class,
        &[0x2a], // errorMsg (5)
        &msg_len,
        msg,
        &[0x30, 0x01], // errorDetail (6) = ERROR_APPLICATION
        &[0x3a, 0x10], // clientId (7)
        &CLIENT_ID,
        &[0x40, 0x00], // retryCount (8) = 0
    ]);
    let mut header_len = Vec::new();
    ozone_rpc::pb::put_varint(&mut header_len, header.len() as u64);
    let total = (header_len.len() + header.len()) as u32;
    cat(&[&total.to_be_bytes(), &header_len, &header])
}

#[test]
fn om_not_leader_exception() {
    let class = b"org.apache.hadoop.ozone.om.exceptions.OMNotLeaderException";
    assert_eq!(class.len(), 0x3a);
    // OMNotLeaderException(currentPeerId, suggestedLeaderPeerId, suggestedLeaderAddress) of
    // Ozone 1.4: "OM:<id> is not the leader. Suggested leader is OM:<id>[<address>]."
    let msg: &[u8] = b"OM:om1 is not the leader. Suggested leader is OM:om2[om2:9862].\n\tat org.apache.hadoop.ozone.om.ratis.OzoneManagerRatisServer.submitRequest(OzoneManagerRatisServer.java:190)";
    assert_eq!(msg.len(), 0xac); // 172: its length is the two-byte varint ac 01
    let frame = error_frame(class, msg);
    // 2 + 2 + 2 + (2 + 58) + (3 + 172) + 2 + 18 + 2 = 263 = varint 87 02, frame 265
    assert_eq!(&frame[..6], &[0x00, 0x00, 0x01, 0x09, 0x87, 0x02]);
    let err = decode_call_response(addr(), &rename_call(), body(&frame)).unwrap_err();
    match &err {
        OmError::NotLeader {
            suggested, message, ..
        } => {
            let s = suggested.as_ref().unwrap();
            assert_eq!(s.node_id, "om2");
            assert_eq!(s.address.as_deref(), Some("om2:9862"));
            assert_eq!(
                message,
                "OM:om1 is not the leader. Suggested leader is OM:om2[om2:9862]."
            );
        }
        other => panic!("not a NotLeader: {other:?}"),
    }
    assert_eq!(err.outcome(), Outcome::Fail);
}

#[test]
fn om_leader_not_ready_exception() {
    let class = b"org.apache.hadoop.ozone.om.exceptions.OMLeaderNotReadyException";
    let msg = b"om1 is Leader but not ready to process request yet.";
    let frame = error_frame(class, msg);
    let err = decode_call_response(addr(), &rename_call(), body(&frame)).unwrap_err();
    assert!(matches!(err, OmError::LeaderNotReady { .. }), "{err:?}");
    assert_eq!(err.outcome(), Outcome::Fail);
}

#[test]
fn unknown_exception_is_info() {
    let frame = error_frame(b"java.io.IOException", b"something broke");
    let err = decode_call_response(addr(), &rename_call(), body(&frame)).unwrap_err();
    assert!(matches!(&err, OmError::Remote { class, .. } if class == "java.io.IOException"));
    assert_eq!(err.outcome(), Outcome::Info);
}

#[test]
fn a_response_to_another_call_is_malformed() {
    let mut other = rename_call();
    other.call_id = 7;
    let frame = cat(&[
        &[0x00, 0x00, 0x00, 0x25],
        &[0x1a],
        &success_header(),
        &[0x09],
        &[0x08, 0x21, 0x18, 0x01, 0x28, 0x01, 0x8a, 0x02, 0x00],
    ]);
    let err = decode_call_response(addr(), &other, body(&frame)).unwrap_err();
    assert!(matches!(err, OmError::Malformed { .. }));
    assert_eq!(err.outcome(), Outcome::Info);
}

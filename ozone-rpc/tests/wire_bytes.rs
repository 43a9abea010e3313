//! Byte-for-byte checks of what the client writes, against bytes written out by hand from the
//! .proto field numbers (see the sources in src/rpc.rs and src/om.rs). Tag byte = field << 3 |
//! wire type (0 varint, 2 length-delimited); sint32 values are ZigZag-encoded.

mod common;

use ozone_rpc::rpc;
use ozone_rpc::{CallRecord, OmClient, OmRequest};

/// The 16-byte RPC client id used throughout: 00 01 02 ... 0f.
const CLIENT_ID: [u8; 16] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
];
const PROTOCOL: &[u8] = b"org.apache.hadoop.ozone.om.protocol.OzoneManagerProtocol";

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn expected_preamble() -> Vec<u8> {
    vec![
        b'h', b'r', b'p', b'c', // RpcConstants.HEADER
        0x09, // RpcConstants.CURRENT_VERSION
        0x00, // service class: default
        0x00, // AuthProtocol.NONE (SIMPLE)
    ]
}

fn expected_context_frame(user: &[u8]) -> Vec<u8> {
    assert_eq!(PROTOCOL.len(), 56);
    assert_eq!(user, b"chaos");
    // RpcRequestHeaderProto, 26 bytes
    let header = cat(&[
        &[0x08, 0x02], // rpcKind (1) = RPC_PROTOCOL_BUFFER (2)
        &[0x10, 0x00], // rpcOp (2) = RPC_FINAL_PACKET (0)
        &[0x18, 0x05], // callId (3), sint32 -3 -> zigzag 5
        &[0x22, 0x10], // clientId (4), 16 bytes
        &CLIENT_ID,    //
        &[0x28, 0x01], // retryCount (5), sint32 -1 -> zigzag 1
    ]);
    assert_eq!(header.len(), 0x1a);
    // IpcConnectionContextProto, 67 bytes
    let context = cat(&[
        &[0x12, 0x07], // userInfo (2), 7 bytes:
        &[0x0a, 0x05], //   effectiveUser (1), 5 bytes
        b"chaos",      //
        &[0x1a, 0x38], // protocol (3), 56 bytes
        PROTOCOL,
    ]);
    assert_eq!(context.len(), 0x43);
    cat(&[
        &[0x00, 0x00, 0x00, 0x5f], // frame length: 1 + 26 + 1 + 67 = 95
        &[0x1a],                   // delimited: 26 bytes
        &header,
        &[0x43], // delimited: 67 bytes
        &context,
    ])
}

/// The rename of vol/bkt/a to b, call id 0, first attempt (retryCount 0).
fn expected_rename_frame() -> Vec<u8> {
    // RpcRequestHeaderProto, 26 bytes
    let rpc_header = cat(&[
        &[0x08, 0x02], // rpcKind (1) = RPC_PROTOCOL_BUFFER
        &[0x10, 0x00], // rpcOp (2) = RPC_FINAL_PACKET
        &[0x18, 0x00], // callId (3) = 0
        &[0x22, 0x10], // clientId (4), 16 bytes
        &CLIENT_ID,
        &[0x28, 0x00], // retryCount (5) = 0
    ]);
    assert_eq!(rpc_header.len(), 0x1a);
    // RequestHeaderProto, 75 bytes
    let request_header = cat(&[
        &[0x0a, 0x0d], // methodName (1), 13 bytes
        b"submitRequest",
        &[0x12, 0x38], // declaringClassProtocolName (2), 56 bytes
        PROTOCOL,
        &[0x18, 0x01], // clientProtocolVersion (3) = 1
    ]);
    assert_eq!(request_header.len(), 0x4b);
    // RenameKeyRequest, 18 bytes
    let rename = cat(&[
        &[0x0a, 0x0d], // keyArgs (1), 13 bytes:
        &[0x0a, 0x03], //   volumeName (1)
        b"vol",
        &[0x12, 0x03], //   bucketName (2)
        b"bkt",
        &[0x1a, 0x01], //   keyName (3)
        b"a",
        &[0x12, 0x01], // toKeyName (2)
        b"b",
    ]);
    assert_eq!(rename.len(), 0x12);
    // OMRequest, 63 bytes
    let om_request = cat(&[
        &[0x08, 0x21], // cmdType (1) = RenameKey (33)
        &[0x1a, 0x24], // clientId (3), 36 bytes: the UUID string of CLIENT_ID
        b"00010203-0405-0607-0809-0a0b0c0d0e0f",
        &[0x28, 0x03],       // version (5) = ClientVersion.CURRENT_VERSION (3)
        &[0x8a, 0x02, 0x12], // renameKeyRequest (33): tag 33<<3|2 = 266 = varint 8a 02; 18 bytes
        &rename,
    ]);
    assert_eq!(om_request.len(), 0x3f);
    cat(&[
        &[0x00, 0x00, 0x00, 0xa7], // frame length: 1 + 26 + 1 + 75 + 1 + 63 = 167
        &[0x1a],
        &rpc_header,
        &[0x4b],
        &request_header,
        &[0x3f],
        &om_request,
    ])
}

#[test]
fn preamble_is_hrpc_9_0_0() {
    assert_eq!(rpc::preamble().to_vec(), expected_preamble());
}

#[test]
fn connection_context_frame_bytes() {
    let got = rpc::connection_context_frame(&CLIENT_ID, "chaos", ozone_rpc::om::OM_PROTOCOL);
    assert_eq!(got, expected_context_frame(b"chaos"));
}

#[test]
fn rename_request_frame_bytes() {
    let rec = CallRecord::new(
        CLIENT_ID,
        0,
        0,
        &OmRequest::rename_key("vol", "bkt", "a", "b"),
    );
    assert_eq!(rec.frame, expected_rename_frame());
}

#[test]
fn retry_count_changes_one_byte_only() {
    let rec = CallRecord::new(
        CLIENT_ID,
        0,
        0,
        &OmRequest::rename_key("vol", "bkt", "a", "b"),
    );
    let retry = rec.with_retry_count(1, 1);
    let mut expected = expected_rename_frame();
    // retryCount is the last field of the RpcRequestHeaderProto: offset 4 + 1 + 25.
    assert_eq!(expected[30], 0x00);
    expected[30] = 0x02; // sint32 1 -> zigzag 2
    assert_eq!(retry.frame, expected);
}

/// What the client actually writes on a socket: preamble, context, the rename frame.
#[tokio::test]
async fn the_client_writes_exactly_these_bytes() {
    let om = common::spawn_om(common::always_ok()).await;
    let mut client = OmClient::connect(vec![om.addr], "chaos").with_client_id(CLIENT_ID);
    let resp = client
        .call(OmRequest::rename_key("vol", "bkt", "a", "b"))
        .await
        .unwrap();
    assert!(resp.is_ok());
    let calls = om.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].preamble.to_vec(), expected_preamble());
    assert_eq!(calls[0].context_frame, expected_context_frame(b"chaos"));
    assert_eq!(calls[0].frame, expected_rename_frame());
    assert_eq!(client.last_call().unwrap().frame, expected_rename_frame());
}

/// An hsync is a CommitKey with `hsync` (field 3) set: the OMRequest bytes, by hand.
#[test]
fn hsync_commit_request_bytes() {
    let mut request = OmRequest::hsync_key("vol", "bkt", "f", 100, 77);
    request.client_id = "c".into();
    let commit = cat(&[
        &[0x0a, 0x0f], // keyArgs (1), 15 bytes:
        &[0x0a, 0x03], //   volumeName (1)
        b"vol",
        &[0x12, 0x03], //   bucketName (2)
        b"bkt",
        &[0x1a, 0x01], //   keyName (3)
        b"f",
        &[0x20, 0x64], //   dataSize (4) = 100
        &[0x10, 0x4d], // clientID (2) = 77
        &[0x18, 0x01], // hsync (3) = true
    ]);
    assert_eq!(commit.len(), 0x15);
    let expected = cat(&[
        &[0x08, 0x24], // cmdType (1) = CommitKey (36)
        &[0x1a, 0x01], // clientId (3)
        b"c",
        &[0x28, 0x03],       // version (5) = 3
        &[0xa2, 0x02, 0x15], // commitKeyRequest (36): tag 36<<3|2 = 290 = varint a2 02; 21 bytes
        &commit,
    ]);
    assert_eq!(request.encode(), expected);
    // The close of the same file is the same request without field 3.
    let mut close = OmRequest::commit_key("vol", "bkt", "f", 100, 77);
    close.client_id = "c".into();
    let mut without = expected.clone();
    without.truncate(without.len() - 2);
    without[9] = 0x13;
    assert_eq!(close.encode(), without);
}

/// RecoverLeaseRequest { volumeName = 1, bucketName = 2, keyName = 3, force = 4 }.
#[test]
fn recover_lease_request_bytes() {
    let mut request = OmRequest::recover_lease("vol", "bkt", "f", false);
    request.client_id = "c".into();
    let expected = cat(&[
        &[0x08, 0x77], // cmdType (1) = RecoverLease (119)
        &[0x1a, 0x01], // clientId (3)
        b"c",
        &[0x28, 0x03],       // version (5) = 3
        &[0xba, 0x07, 0x0d], // RecoverLeaseRequest (119): tag 119<<3|2 = 954 = varint ba 07; 13 bytes
        &[0x0a, 0x03],
        b"vol",
        &[0x12, 0x03],
        b"bkt",
        &[0x1a, 0x01],
        b"f",
    ]);
    assert_eq!(request.encode(), expected);
}

/// hdds.TransferLeadershipRequestProto { required string newLeaderId = 1 } in OMRequest field 117,
/// as `ozone admin om transfer -n om2` sends it.
#[test]
fn transfer_leadership_request_bytes() {
    let mut request = OmRequest::transfer_leadership("om2");
    request.client_id = "c".into();
    let expected = cat(&[
        &[0x08, 0x75], // cmdType (1) = TransferLeadership (117)
        &[0x1a, 0x01], // clientId (3)
        b"c",
        &[0x28, 0x03],       // version (5) = 3
        &[0xaa, 0x07, 0x05], // field 117: tag 117<<3|2 = 938 = varint aa 07; 5 bytes
        &[0x0a, 0x03],
        b"om2",
    ]);
    assert_eq!(request.encode(), expected);
    assert_eq!(OmRequest::decode(&expected).unwrap(), request);
}

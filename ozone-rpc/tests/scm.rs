//! The SCM client against a fake SCM on loopback that speaks Hadoop RPC: what it sends (the
//! protocol, the command, the request field) and how it reads each answer, refusals included.

use std::time::Duration;

use ozone_rpc::io::{read_frame, read_preamble};
use ozone_rpc::pb::{Reader, Writer};
use ozone_rpc::rpc::{self, RpcResponseHeader};
use ozone_rpc::scm::SCM_PROTOCOL;
use ozone_rpc::{OmError, ScmClient};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// What the fake SCM saw of the one call on its one connection.
#[derive(Debug)]
struct Seen {
    protocol: String,
    method: String,
    cmd_type: u64,
    request_fields: Vec<u32>,
}

/// A fake SCM that answers one call with `answer(cmd_type)`: `Ok(response message)` as a
/// success, `Err(exception class)` as an RPC error.
async fn fake_scm(
    answer: fn(u64) -> Result<Vec<u8>, &'static str>,
) -> (std::net::SocketAddr, tokio::task::JoinHandle<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        rpc::check_preamble(&read_preamble(&mut stream).await.unwrap()).unwrap();
        let context = rpc::decode_request(&read_frame(&mut stream).await.unwrap()).unwrap();
        let (_, protocol) = rpc::decode_connection_context(&context.payload).unwrap();
        let call = rpc::decode_request(&read_frame(&mut stream).await.unwrap()).unwrap();
        let (mut cmd_type, mut request_fields) = (0, Vec::new());
        let mut r = Reader::new(&call.payload);
        while let Some(f) = r.next_field().unwrap() {
            if f.number == 1 {
                cmd_type = f.as_u64().unwrap();
            }
            request_fields.push(f.number);
        }
        let h = &call.header;
        let frame = match answer(cmd_type) {
            Ok(message) => rpc::response_frame(
                &RpcResponseHeader::success(h.call_id, &h.client_id, h.retry_count),
                Some(&message),
            ),
            Err(class) => rpc::response_frame(
                &RpcResponseHeader::error(h.call_id, &h.client_id, h.retry_count, class, "no"),
                None,
            ),
        };
        stream.write_all(&frame).await.unwrap();
        Seen {
            protocol: protocol.unwrap_or_default(),
            method: call.request_header.unwrap().method_name,
            cmd_type,
            request_fields,
        }
    });
    (addr, task)
}

/// ScmContainerLocationResponse with `status` and `inner` in field `field`.
fn response(cmd_type: u64, status: u64, field: u32, inner: Writer) -> Vec<u8> {
    let mut w = Writer::new();
    w.uint(1, cmd_type).uint(5, status).message(field, &inner);
    w.finish()
}

fn client(addr: std::net::SocketAddr) -> ScmClient {
    ScmClient::new(addr, "hadoop", Duration::from_secs(5))
}

#[tokio::test]
async fn in_safe_mode_is_asked_as_the_scm_protocol_and_read_from_field_19() {
    let (addr, seen) = fake_scm(|cmd| {
        let mut inner = Writer::new();
        inner.bool(1, true);
        Ok(response(cmd, 1, 19, inner))
    })
    .await;
    assert!(client(addr).in_safe_mode().await.unwrap());
    let seen = seen.await.unwrap();
    assert_eq!(seen.protocol, SCM_PROTOCOL);
    assert_eq!(seen.method, "submitRequest");
    assert_eq!(seen.cmd_type, 14, "InSafeMode");
    assert_eq!(seen.request_fields, vec![1, 3, 19]);
}

#[tokio::test]
async fn pipelines_are_listed_with_state_type_and_factor() {
    let (addr, seen) = fake_scm(|cmd| {
        let mut list = Writer::new();
        for (state, kind, factor) in [(2, 1, 3), (2, 1, 1), (1, 1, 3)] {
            let mut p = Writer::new();
            p.uint(2, state).uint(3, kind).uint(4, factor);
            list.message(1, &p);
        }
        Ok(response(cmd, 1, 14, list))
    })
    .await;
    let pipelines = client(addr).pipelines().await.unwrap();
    assert_eq!(pipelines.len(), 3);
    let open_three: Vec<bool> = pipelines.iter().map(|p| p.is_open_ratis_three()).collect();
    assert_eq!(open_three, vec![true, false, false]);
    assert_eq!(seen.await.unwrap().cmd_type, 9, "ListPipelines");
}

#[tokio::test]
async fn a_follower_scms_refusal_and_a_status_other_than_ok_are_errors() {
    let (addr, _) =
        fake_scm(|_| Err("org.apache.ratis.protocol.exceptions.NotLeaderException")).await;
    match client(addr).in_safe_mode().await {
        Err(OmError::Remote { class, .. }) => assert!(class.ends_with("NotLeaderException")),
        other => panic!("expected a remote error, got {other:?}"),
    }
    // Status SCM_NOT_LEADER (4) in an RPC success.
    let (addr, _) = fake_scm(|cmd| Ok(response(cmd, 4, 19, Writer::new()))).await;
    let err = client(addr).in_safe_mode().await.unwrap_err();
    assert!(err.to_string().contains("status Some(4)"), "{err}");
}

//! A fake Ozone Manager that speaks the Hadoop RPC framing: it checks the preamble and the
//! connection context, decodes every call and answers what a handler says. Loopback only.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use ozone_rpc::io::{read_frame, read_preamble};
use ozone_rpc::om::{OM_LEADER_NOT_READY_EXCEPTION, OM_NOT_LEADER_EXCEPTION};
use ozone_rpc::rpc::{self, RpcRequestHeader, RpcResponseHeader};
use ozone_rpc::{OmRequest, OmResponse};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// What the fake OM does with one call.
#[derive(Debug, Clone)]
pub enum Reply {
    Ok(Box<OmResponse>),
    /// An RPC error response carrying this exception class and message.
    Error(String, String),
    /// Close the connection without answering.
    Drop,
    /// Never answer (keep the connection open).
    Silent,
}

impl Reply {
    pub fn ok(resp: OmResponse) -> Self {
        Reply::Ok(Box::new(resp))
    }
    pub fn not_leader(msg: &str) -> Self {
        Reply::Error(OM_NOT_LEADER_EXCEPTION.into(), msg.into())
    }
    pub fn not_ready(msg: &str) -> Self {
        Reply::Error(OM_LEADER_NOT_READY_EXCEPTION.into(), msg.into())
    }
}

/// One call as the fake OM received it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Index of the TCP connection on this OM (0, 1, ...).
    pub conn: usize,
    pub preamble: [u8; 7],
    /// The whole connection-context frame (length included).
    pub context_frame: Vec<u8>,
    pub user: Option<String>,
    pub protocol: Option<String>,
    pub header: RpcRequestHeader,
    /// The whole call frame (length included), as it came off the wire.
    pub frame: Vec<u8>,
    pub request: OmRequest,
}

pub type Handler = Arc<dyn Fn(&OmRequest, &RpcRequestHeader) -> Reply + Send + Sync>;

pub struct FakeOm {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    pub connections: Arc<Mutex<usize>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeOm {
    pub fn calls(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
    pub fn connection_count(&self) -> usize {
        *self.connections.lock().unwrap()
    }
    /// Stops listening and closes every connection (a killed OM).
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for FakeOm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn spawn_om(handler: Handler) -> FakeOm {
    spawn_om_at("127.0.0.1:0".parse().unwrap(), handler).await
}

/// A fake OM on this address (a "restarted" OM on the port of a stopped one).
pub async fn spawn_om_at(addr: SocketAddr, handler: Handler) -> FakeOm {
    let listener = TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(Mutex::new(Vec::new()));
    let connections = Arc::new(Mutex::new(0usize));
    let (rec, conns) = (received.clone(), connections.clone());
    let task = tokio::spawn(async move {
        let mut conn_tasks = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let conn = {
                let mut c = conns.lock().unwrap();
                *c += 1;
                *c - 1
            };
            let (h, rec) = (handler.clone(), rec.clone());
            // The JoinSet aborts the connections when this task is aborted.
            conn_tasks.spawn(serve(stream, conn, h, rec));
        }
    });
    FakeOm {
        addr,
        received,
        connections,
        task,
    }
}

async fn serve(
    mut stream: tokio::net::TcpStream,
    conn: usize,
    handler: Handler,
    rec: Arc<Mutex<Vec<Received>>>,
) {
    let Ok(preamble) = read_preamble(&mut stream).await else {
        return;
    };
    if rpc::check_preamble(&preamble).is_err() {
        return;
    }
    let Ok(ctx_body) = read_frame(&mut stream).await else {
        return;
    };
    let Ok(ctx) = rpc::decode_request(&ctx_body) else {
        return;
    };
    assert_eq!(ctx.header.call_id, rpc::CONNECTION_CONTEXT_CALL_ID);
    let (user, protocol) = rpc::decode_connection_context(&ctx.payload).unwrap();
    let context_frame = with_len(&ctx_body);
    loop {
        let Ok(body) = read_frame(&mut stream).await else {
            return;
        };
        let call = rpc::decode_request(&body).expect("a call frame");
        let request = OmRequest::decode(&call.payload).expect("an OMRequest");
        let header = call.header.clone();
        rec.lock().unwrap().push(Received {
            conn,
            preamble,
            context_frame: context_frame.clone(),
            user: user.clone(),
            protocol: protocol.clone(),
            header: header.clone(),
            frame: with_len(&body),
            request: request.clone(),
        });
        let out = match handler(&request, &header) {
            Reply::Ok(resp) => rpc::response_frame(
                &RpcResponseHeader::success(header.call_id, &header.client_id, header.retry_count),
                Some(&resp.encode()),
            ),
            Reply::Error(class, msg) => rpc::response_frame(
                &RpcResponseHeader::error(
                    header.call_id,
                    &header.client_id,
                    header.retry_count,
                    &class,
                    &format!("{msg}\n\tat org.apache.hadoop.ozone.om.OzoneManager.fake(OzoneManager.java:1)"),
                ),
                None,
            ),
            Reply::Drop => return,
            Reply::Silent => {
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                return;
            }
        };
        if stream.write_all(&out).await.is_err() {
            return;
        }
    }
}

fn with_len(body: &[u8]) -> Vec<u8> {
    let mut v = (body.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

/// A handler that answers every call with OK for its command.
pub fn always_ok() -> Handler {
    Arc::new(|req, _| Reply::ok(OmResponse::new(req.cmd_type(), ozone_rpc::Status::OK)))
}

/// A handler that always answers this reply.
pub fn always(reply: Reply) -> Handler {
    Arc::new(move |_, _| reply.clone())
}

/// A loopback address nothing listens on.
pub async fn closed_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a
}

//! A proxy owned by the harness between the clients and a node's client port. Without a fault it
//! forwards bytes unchanged. Faults: lose the reply to matching HTTP requests (the request is
//! forwarded and applied, the answer dropped and the connection closed), delay replies, reset
//! connections. HTTP/1.1 is parsed to match requests; any other protocol (gRPC's HTTP/2, RESP)
//! is piped as raw bytes, where delay and reset still apply.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use regex::Regex;
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Which requests a lose-reply fault hits.
#[derive(Debug, Clone, Default)]
pub struct RequestMatch {
    pub method: Option<String>,
    pub path: Option<Regex>,
    /// A header name (lower case) and a regex its value must match.
    pub header: Option<(String, Regex)>,
}

impl RequestMatch {
    fn matches(&self, head: &RequestHead) -> bool {
        self.method
            .as_ref()
            .is_none_or(|m| m.eq_ignore_ascii_case(&head.method))
            && self.path.as_ref().is_none_or(|p| p.is_match(&head.path))
            && self.header.as_ref().is_none_or(|(name, value)| {
                head.headers
                    .iter()
                    .any(|(n, v)| n.eq_ignore_ascii_case(name) && value.is_match(v))
            })
    }
}

#[derive(Debug, Clone, Default)]
struct Faults {
    lose_reply: Option<(RequestMatch, u32)>,
    delay: Option<Duration>,
}

/// What the proxy did to a request, for faults.jsonl.
#[derive(Debug, Clone, Serialize)]
pub struct ProxyEvent {
    pub node: String,
    pub fault: &'static str,
    /// `POST /v3/kv/txn`
    pub request: String,
    /// The `x-chaos-call` header of the request, when the client set one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The answer that was dropped: status line and the start of the body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_reply: Option<String>,
}

pub struct Proxy {
    pub node: String,
    pub listen: SocketAddr,
    faults: Arc<Mutex<Faults>>,
    /// Bumped to reset every open connection.
    resets: watch::Sender<u64>,
    stop: CancellationToken,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(
        node: &str,
        upstream: SocketAddr,
        events: mpsc::UnboundedSender<ProxyEvent>,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let listen = listener.local_addr()?;
        let faults = Arc::new(Mutex::new(Faults::default()));
        let (resets, _) = watch::channel(0u64);
        let stop = CancellationToken::new();
        let proxy = Proxy {
            node: node.to_string(),
            listen,
            faults: faults.clone(),
            resets: resets.clone(),
            stop: stop.clone(),
        };
        let node = node.to_string();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stop.cancelled() => return,
                    a = listener.accept() => a,
                };
                let Ok((client, _)) = accepted else { continue };
                let _ = client.set_nodelay(true);
                let conn = Connection {
                    node: node.clone(),
                    upstream,
                    faults: faults.clone(),
                    events: events.clone(),
                    resets: resets.subscribe(),
                    stop: stop.clone(),
                };
                tokio::spawn(conn.serve(client));
            }
        });
        Ok(proxy)
    }

    pub fn lose_replies(&self, matching: RequestMatch, count: u32) {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lose_reply = Some((matching, count));
    }

    pub fn delay_replies(&self, delay: Option<Duration>) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).delay = delay;
    }

    /// Resets every open connection now (clients see ECONNRESET).
    pub fn reset_connections(&self) {
        self.resets.send_modify(|n| *n += 1);
    }

    pub fn clear(&self) {
        *self.faults.lock().unwrap_or_else(|e| e.into_inner()) = Faults::default();
    }

    pub fn stop(&self) {
        self.stop.cancel();
    }
}

struct Connection {
    node: String,
    upstream: SocketAddr,
    faults: Arc<Mutex<Faults>>,
    events: mpsc::UnboundedSender<ProxyEvent>,
    resets: watch::Receiver<u64>,
    stop: CancellationToken,
}

#[derive(Debug)]
struct RequestHead {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

/// Why a connection ended abnormally (each ends it; none is an error of the harness).
enum End {
    Closed,
    Reset,
}

impl Connection {
    async fn serve(self, client: TcpStream) {
        let Ok(server) = TcpStream::connect(self.upstream).await else {
            // The node is down: refuse as it would (the client sees the connection close).
            return;
        };
        let _ = server.set_nodelay(true);
        let mut client = BufReader::new(client);
        // HTTP/1.x starts with a method token; anything else is piped as bytes.
        let is_http1 = match client.fill_buf().await {
            Ok(buf) if !buf.is_empty() => looks_like_http1(buf),
            _ => return,
        };
        let mut resets = self.resets.clone();
        resets.mark_unchanged();
        let stop = self.stop.clone();
        let end = tokio::select! {
            _ = stop.cancelled() => End::Closed,
            _ = resets.changed() => End::Reset,
            end = async {
                if is_http1 {
                    self.http(&mut client, server).await
                } else {
                    self.pipe(&mut client, server).await
                }
            } => end,
        };
        if let End::Reset = end {
            // SO_LINGER 0: closing sends RST, as a crashed peer or a middlebox would.
            let _ = socket2::SockRef::from(client.get_ref()).set_linger(Some(Duration::ZERO));
        }
    }

    fn delay(&self) -> Option<Duration> {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).delay
    }

    async fn pipe(&self, client: &mut BufReader<TcpStream>, server: TcpStream) -> End {
        let (mut server_read, mut server_write) = server.into_split();
        // What the protocol sniff already read (a Hadoop RPC preamble, say) goes first: the
        // split below reads the socket itself, past the reader's buffer.
        let sniffed = client.buffer().to_vec();
        client.consume(sniffed.len());
        if server_write.write_all(&sniffed).await.is_err() {
            return End::Closed;
        }
        let (client_read, mut client_write) = client.get_mut().split();
        let mut client_read = BufReader::new(client_read);
        let upstream = async {
            let _ = tokio::io::copy_buf(&mut client_read, &mut server_write).await;
            let _ = server_write.shutdown().await;
        };
        let downstream = async {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                let n = match server_read.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Some(d) = self.delay() {
                    tokio::time::sleep(d).await;
                }
                if client_write.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
            let _ = client_write.shutdown().await;
        };
        tokio::join!(upstream, downstream);
        End::Closed
    }

    async fn http(&self, client: &mut BufReader<TcpStream>, server: TcpStream) -> End {
        let mut server = BufReader::new(server);
        loop {
            let Some((head, raw_head)) = read_request_head(client).await else {
                return End::Closed;
            };
            let body_len = content_length(&head.headers);
            let mut body = vec![0u8; body_len];
            if client.read_exact(&mut body).await.is_err() {
                return End::Closed;
            }
            let server_stream = server.get_mut();
            if server_stream.write_all(&raw_head).await.is_err()
                || server_stream.write_all(&body).await.is_err()
            {
                return End::Closed;
            }
            let Some(reply) = read_response(&mut server).await else {
                return End::Closed;
            };
            let lose = {
                let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
                match &mut faults.lose_reply {
                    Some((matching, left)) if *left > 0 && matching.matches(&head) => {
                        *left -= 1;
                        true
                    }
                    _ => false,
                }
            };
            let request = format!("{} {}", head.method, head.path);
            let call = head
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("x-chaos-call"))
                .map(|(_, v)| v.clone());
            if lose {
                let _ = self.events.send(ProxyEvent {
                    node: self.node.clone(),
                    fault: "lose-reply",
                    request,
                    call,
                    dropped_reply: Some(summarize_reply(&reply)),
                });
                // The request was applied; the client gets nothing but a closed connection.
                return End::Closed;
            }
            if let Some(d) = self.delay() {
                tokio::time::sleep(d).await;
            }
            if client.get_mut().write_all(&reply).await.is_err() {
                return End::Closed;
            }
        }
    }
}

fn looks_like_http1(buf: &[u8]) -> bool {
    const METHODS: [&[u8]; 7] = [
        b"GET ",
        b"PUT ",
        b"POST ",
        b"HEAD ",
        b"DELETE ",
        b"PATCH ",
        b"OPTIONS ",
    ];
    METHODS
        .iter()
        .any(|m| buf.starts_with(m) || m.starts_with(buf))
}

async fn read_request_head(reader: &mut BufReader<TcpStream>) -> Option<(RequestHead, Vec<u8>)> {
    let mut raw = Vec::new();
    let mut line = String::new();
    reader.read_line(&mut line).await.ok()?;
    if line.is_empty() {
        return None;
    }
    raw.extend_from_slice(line.as_bytes());
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let headers = read_headers(reader, &mut raw).await?;
    Some((
        RequestHead {
            method,
            path,
            headers,
        },
        raw,
    ))
}

/// Header lines up to the blank line, appended raw to `raw`; None if the peer closed first.
async fn read_headers(
    reader: &mut BufReader<TcpStream>,
    raw: &mut Vec<u8>,
) -> Option<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).await.ok()?;
        if h.is_empty() {
            return None;
        }
        raw.extend_from_slice(h.as_bytes());
        let trimmed = h.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((n, v)) = trimmed.split_once(':') {
            headers.push((n.trim().to_string(), v.trim().to_string()));
        }
    }
    Some(headers)
}

fn content_length(headers: &[(String, String)]) -> usize {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Reads one whole response (Content-Length or chunked), as raw bytes.
async fn read_response(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut raw = Vec::new();
    // The status line is kept in `raw` like any header line; it has no ':' name to match.
    let headers = read_headers(reader, &mut raw).await?;
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        loop {
            let mut size_line = String::new();
            reader.read_line(&mut size_line).await.ok()?;
            raw.extend_from_slice(size_line.as_bytes());
            let size = usize::from_str_radix(size_line.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0u8; size + 2];
            reader.read_exact(&mut chunk).await.ok()?;
            raw.extend_from_slice(&chunk);
            if size == 0 {
                return Some(raw);
            }
        }
    }
    let mut body = vec![0u8; content_length(&headers)];
    reader.read_exact(&mut body).await.ok()?;
    raw.extend_from_slice(&body);
    Some(raw)
}

fn summarize_reply(reply: &[u8]) -> String {
    let text = String::from_utf8_lossy(reply);
    let status = text.lines().next().unwrap_or_default().trim().to_string();
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let body: String = body.chars().take(300).collect();
    format!("{status} {body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny HTTP server that counts requests and answers each with its number.
    async fn counting_server() -> (SocketAddr, Arc<Mutex<u32>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let count = Arc::new(Mutex::new(0u32));
        let seen = count.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let seen = seen.clone();
                tokio::spawn(async move {
                    let mut stream = BufReader::new(stream);
                    while let Some((head, _)) = read_request_head(&mut stream).await {
                        let mut body = vec![0u8; content_length(&head.headers)];
                        stream.read_exact(&mut body).await.unwrap();
                        let n = {
                            let mut c = seen.lock().unwrap();
                            *c += 1;
                            *c
                        };
                        let reply = format!("{n}");
                        let out = format!(
                            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{reply}",
                            reply.len()
                        );
                        stream.get_mut().write_all(out.as_bytes()).await.unwrap();
                    }
                });
            }
        });
        (addr, count)
    }

    async fn post(addr: SocketAddr, call: &str) -> Result<String, String> {
        let mut s = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        let req = format!("POST /v3/kv/txn HTTP/1.1\r\nhost: x\r\nx-chaos-call: {call}\r\ncontent-length: 2\r\n\r\n{{}}");
        s.write_all(req.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut reader = BufReader::new(s);
        let reply = read_response(&mut reader).await.ok_or("closed")?;
        Ok(String::from_utf8_lossy(&reply)
            .rsplit("\r\n\r\n")
            .next()
            .unwrap()
            .to_string())
    }

    #[tokio::test]
    async fn without_faults_replies_pass_through() {
        let (server, _) = counting_server().await;
        let (tx, _rx) = mpsc::unbounded_channel();
        let proxy = Proxy::start("n1", server, tx).await.unwrap();
        assert_eq!(post(proxy.listen, "c/1").await.unwrap(), "1");
        assert_eq!(post(proxy.listen, "c/2").await.unwrap(), "2");
    }

    #[tokio::test]
    async fn a_lost_reply_is_applied_and_recorded_but_never_delivered() {
        let (server, count) = counting_server().await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let proxy = Proxy::start("n1", server, tx).await.unwrap();
        proxy.lose_replies(
            RequestMatch {
                method: Some("POST".into()),
                path: Some(Regex::new("^/v3/kv/txn$").unwrap()),
                header: None,
            },
            1,
        );
        assert_eq!(post(proxy.listen, "c/1").await, Err("closed".to_string()));
        assert_eq!(*count.lock().unwrap(), 1, "the request reached the server");
        let event = rx.recv().await.unwrap();
        assert_eq!(event.call.as_deref(), Some("c/1"));
        assert!(event.dropped_reply.unwrap().contains("200 OK"));
        // Only the next matching request: the retry goes through.
        assert_eq!(post(proxy.listen, "c/1").await.unwrap(), "2");
    }

    /// A byte protocol (Hadoop RPC opens with `hrpc`): every byte reaches the server, the ones
    /// read to tell it from HTTP included, and the answer comes back.
    #[tokio::test]
    async fn a_byte_protocol_is_piped_whole() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut got = [0u8; 11];
            stream.read_exact(&mut got).await.unwrap();
            stream.write_all(&got).await.unwrap();
        });
        let (tx, _rx) = mpsc::unbounded_channel();
        let proxy = Proxy::start("om1", server, tx).await.unwrap();
        let mut client = TcpStream::connect(proxy.listen).await.unwrap();
        client.write_all(b"hrpc\x09\x00\x00").await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.write_all(b"call").await.unwrap();
        let mut echo = [0u8; 11];
        tokio::time::timeout(Duration::from_secs(5), client.read_exact(&mut echo))
            .await
            .expect("the server answered")
            .unwrap();
        assert_eq!(&echo, b"hrpc\x09\x00\x00call");
    }
}

// What the two OAuth interop scripts (oauth-sdk1.mjs, oauth-client2.mjs)
// share and that is not the SDK under test: bounded waits, the loopback
// callback listener a native MCP client opens for the redirect, and plain
// HTTP probes of the MCP endpoint and the revocation endpoint. Every address
// is the server's, or the listener's own on 127.0.0.1.
import { createServer } from 'node:http';

// within rejects when p has not settled after ms.
export function within(ms, what, p) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

// callbackListener listens on 127.0.0.1 (port 0: one the system picks) for
// the browser's redirect after consent. url is the redirect URI; params()
// resolves with the query of the first request to /callback.
export async function callbackListener(path = '/callback') {
  let resolve;
  const got = new Promise((r) => (resolve = r));
  const server = createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname !== path) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' });
    res.end('<!doctype html><title>Signed in</title><h1 id="mcp-callback">Signed in: you can close this window.</h1>');
    resolve(u.searchParams);
  });
  await new Promise((r, j) => server.listen(0, '127.0.0.1', r).once('error', j));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${path}`,
    params: (ms) => within(ms, 'the browser redirect to the callback', got),
    close: () => new Promise((r) => server.close(() => r()))
  };
}

// mcpStatus is the HTTP status an initialize request to url gets with
// bearer token: a probe outside any SDK, so that a client's own retries and
// refreshes cannot hide a refused token.
export async function mcpStatus(url, token) {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2025-11-25'
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1.0.0' } }
    })
  });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '' };
}

// revoke posts token to the revocation endpoint (RFC 7009) as a public
// client, and returns the status.
export async function revoke(endpoint, token, clientId) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'refresh_token', client_id: clientId })
  });
  await res.body?.cancel();
  return res.status;
}

// structured is a tool result's structured content, or throws its error.
export function structured(result, tool) {
  if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  return result.structuredContent;
}

// The official TypeScript client 2.x (@modelcontextprotocol/client, pinned in
// package.json) signs in to Atrium with OAuth, known by its Client ID
// Metadata Document (the 2025-11-25 way, no registration): the first request
// gets a 401, the client discovers the authorization server from it
// (RFC 9728, RFC 8414), sees client_id_metadata_document_supported and uses
// the document's URL as its client_id, and sends the person to the
// authorization URL. This script prints that URL and waits on its own
// 127.0.0.1 callback listener; the person consents in a browser
// (e2e/oauth_interop_test.go drives Chromium), which follows the redirect
// here. Then: finishAuth with the whole callback (the client checks iss,
// RFC 9207), tools/list and whoami, a refresh through the client's auth(),
// the refresh token revoked at the server's revocation endpoint, and the
// access tokens refused after it.
//
// Usage: node oauth-client2.mjs MCP_URL CLIENT_ID_DOCUMENT_URL
// Prints "AUTHORIZE <url>" when the person must consent, then one JSON object
// of what it saw on stdout; exits 1 on any failure. Every wait is bounded;
// only MCP_URL's server and the listener's own address are contacted (the
// server, not this client, fetches the document).
import { Client, StreamableHTTPClientTransport, auth, discoverOAuthServerInfo, UnauthorizedError } from '@modelcontextprotocol/client';
import { callbackListener, mcpStatus, revoke, structured, within } from './oauth-common.mjs';

const [mcpURL, documentURL] = process.argv.slice(2);
if (!mcpURL || !documentURL) {
  console.error('usage: node oauth-client2.mjs MCP_URL CLIENT_ID_DOCUMENT_URL');
  process.exit(2);
}

const seen = { sdk: '2.x', redirects: 0, registered: false };
const callback = await callbackListener();

// An OAuthClientProvider that keeps everything in memory, for this process;
// the discovery state is kept with the verifier, as the 2.x client wants
// (it binds the code to the authorization server that issued it).
const kept = { client: undefined, tokens: undefined, verifier: undefined, discovery: undefined };
const state = 'client2-' + Math.random().toString(36).slice(2);
const provider = {
  clientMetadataUrl: documentURL,
  get redirectUrl() {
    return callback.url;
  },
  get clientMetadata() {
    // What the document says; used only if the server did not take
    // metadata documents and the client fell back to registration.
    return {
      client_name: 'TypeScript client 2.x interop',
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none'
    };
  },
  state: () => state,
  clientInformation: () => kept.client,
  saveClientInformation: (info) => {
    kept.client = info;
  },
  tokens: () => kept.tokens,
  saveTokens: (tokens) => {
    kept.tokens = tokens;
  },
  redirectToAuthorization: (url) => {
    seen.redirects++;
    seen.authorizationURL = url.href;
    console.log(`AUTHORIZE ${url.href}`);
  },
  saveCodeVerifier: (v) => {
    kept.verifier = v;
  },
  codeVerifier: () => {
    if (!kept.verifier) throw new Error('no code verifier saved');
    return kept.verifier;
  },
  saveDiscoveryState: (s) => {
    kept.discovery = s;
  },
  discoveryState: () => kept.discovery
};

// Any registration request would go through fetch: note it, so that the
// test can tell a metadata document sign-in from a fallback to DCR.
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const u = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (new URL(u).pathname === '/oauth/register') seen.registered = true;
  return realFetch(input, init);
};

function newClient() {
  return new Client({ name: 'atrium-interop-client2-oauth', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
}

// connectAndCall connects a new client through provider, and lists and calls.
async function connectAndCall(what, probeWrite) {
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  await within(20000, `${what}: connect`, client.connect(transport));
  const out = { negotiated: client.getNegotiatedProtocolVersion() };
  const tools = await within(10000, `${what}: tools/list`, client.listTools());
  const who = structured(await within(10000, `${what}: whoami`, client.callTool({ name: 'whoami', arguments: {} })), 'whoami');
  out.tools = tools.tools.map((t) => t.name);
  out.whoami = { handle: who.principal?.handle, kind: who.principal?.kind, role: who.role, workspace: who.workspace, protocol: who.protocol_version };
  if (probeWrite) {
    // The grant was consented as reader: a write is refused, whatever the
    // agent itself may do.
    try {
      const res = await within(10000, `${what}: create_page`, client.callTool({ name: 'create_page', arguments: { title: 'Reader probe', content: 'x\n' } }));
      out.readerWrite = res.isError ? 'refused' : 'written';
    } catch (err) {
      out.readerWrite = 'refused';
      out.readerWriteError = String(err?.message ?? err);
    }
  }
  await client.close();
  return out;
}

try {
  // 1. No token yet: the 401 starts discovery and the redirect.
  const first = newClient();
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  try {
    await within(20000, 'connect before sign-in', first.connect(transport));
    throw new Error('connected without signing in');
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  if (!seen.authorizationURL) throw new Error('the client never sent the person to the authorization URL');
  seen.clientId = kept.client?.client_id;

  // 2. The person consents in the browser, which comes back here; the
  // client reads the callback itself (code, and iss against the metadata).
  const params = await callback.params(90000);
  seen.callback = { state: params.get('state'), iss: params.get('iss'), error: params.get('error'), hasCode: !!params.get('code') };
  if (params.get('state') !== state) throw new Error(`state ${params.get('state')} is not the one sent (${state})`);
  await within(10000, 'finishAuth', transport.finishAuth(params));
  const firstTokens = kept.tokens;
  seen.tokens = { access: firstTokens.access_token, refresh: firstTokens.refresh_token, type: firstTokens.token_type, scope: firstTokens.scope, expiresIn: firstTokens.expires_in };

  // 3. Connected, with the grant's principal and role.
  const connected = await connectAndCall('after sign-in', true);
  Object.assign(seen, connected);

  // 4. Refresh through the client's own path (what its transport does on
  // a 401): auth() with stored tokens posts the refresh token.
  const result = await within(10000, 'refresh', auth(provider, { serverUrl: new URL(mcpURL) }));
  seen.refresh = { result, access: kept.tokens.access_token, refresh: kept.tokens.refresh_token, redirects: seen.redirects };
  if (result !== 'AUTHORIZED') throw new Error(`refresh: auth() answered ${result}`);
  seen.afterRefresh = await connectAndCall('after refresh', false);

  // 5. Revoke the refresh token where the server's metadata says; the
  // grant ends, and with it every access token issued under it.
  const info = await within(10000, 'discovery', discoverOAuthServerInfo(new URL(mcpURL)));
  const endpoint = info.authorizationServerMetadata?.revocation_endpoint;
  if (!endpoint) throw new Error('no revocation_endpoint in the authorization server metadata');
  seen.revocationEndpoint = endpoint;
  seen.beforeRevoke = (await mcpStatus(mcpURL, kept.tokens.access_token)).status;
  seen.revoked = await within(10000, 'revoke', revoke(endpoint, kept.tokens.refresh_token, kept.client.client_id));
  const after = await mcpStatus(mcpURL, kept.tokens.access_token);
  seen.afterRevoke = { status: after.status, challenge: after.challenge, first: (await mcpStatus(mcpURL, firstTokens.access_token)).status };

  // 6. The client itself, on the revoked access token alone (no refresh
  // token to fall back on), is refused and sent back to consent.
  const lone = {
    ...provider,
    tokens: () => ({ access_token: kept.tokens.access_token, token_type: 'Bearer', issuer: kept.tokens.issuer }),
    saveTokens: () => {},
    redirectToAuthorization: () => {
      seen.afterRevoke.sentBackToConsent = true;
    }
  };
  const again = newClient();
  try {
    await within(20000, 'connect with the revoked token', again.connect(new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: lone })));
    seen.afterRevoke.sdk = 'connected';
  } catch (err) {
    seen.afterRevoke.sdk = err instanceof UnauthorizedError ? 'unauthorized' : `error: ${err?.message ?? err}`;
  }

  await callback.close();
  console.log(JSON.stringify(seen));
  process.exit(0);
} catch (err) {
  console.error(`oauth-client2: ${err?.stack ?? err}`);
  console.error(`seen so far: ${JSON.stringify(seen)}`);
  process.exit(1);
}

// The official TypeScript SDK 1.x (@modelcontextprotocol/sdk, pinned in
// package.json) signs in to Atrium with OAuth as a native MCP client does:
// the first request gets a 401, the SDK discovers the authorization server
// from it (RFC 9728, RFC 8414), registers itself dynamically (RFC 7591) and
// sends the person to the authorization URL. This script prints that URL and
// waits on its own 127.0.0.1 callback listener; the person consents in a
// browser (e2e/oauth_interop_test.go drives Chromium), which follows the
// redirect here. Then: finishAuth, tools/list and whoami, a refresh through
// the SDK's auth(), the refresh token revoked at the server's revocation
// endpoint, and the access tokens refused after it.
//
// Usage: node oauth-sdk1.mjs MCP_URL   (driven by e2e/oauth_interop_test.go)
// Prints "AUTHORIZE <url>" when the person must consent, then one JSON object
// of what it saw on stdout; exits 1 on any failure. Every wait is bounded;
// only MCP_URL's server and the listener's own address are contacted.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, discoverOAuthServerInfo, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { callbackListener, mcpStatus, revoke, structured, within } from './oauth-common.mjs';

const [mcpURL] = process.argv.slice(2);
if (!mcpURL) {
  console.error('usage: node oauth-sdk1.mjs MCP_URL');
  process.exit(2);
}

const seen = { sdk: '1.x', redirects: 0 };
const callback = await callbackListener();

// An OAuthClientProvider that keeps everything in memory, for this process.
const kept = { client: undefined, tokens: undefined, verifier: undefined, discovery: undefined };
const state = 'sdk1-' + Math.random().toString(36).slice(2);
const provider = {
  get redirectUrl() {
    return callback.url;
  },
  get clientMetadata() {
    return {
      client_name: 'TypeScript SDK 1.x interop',
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

// connect connects a new client through provider, and lists and calls.
async function connectAndCall(what) {
  const client = new Client({ name: 'atrium-interop-sdk1-oauth', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  await within(20000, `${what}: connect`, client.connect(transport));
  const tools = await within(10000, `${what}: tools/list`, client.listTools());
  const who = structured(await within(10000, `${what}: whoami`, client.callTool({ name: 'whoami', arguments: {} })), 'whoami');
  await client.close();
  return {
    tools: tools.tools.map((t) => t.name),
    whoami: { handle: who.principal?.handle, kind: who.principal?.kind, role: who.role, workspace: who.workspace }
  };
}

try {
  // 1. No token yet: the 401 starts discovery, registration and the redirect.
  const first = new Client({ name: 'atrium-interop-sdk1-oauth', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
  try {
    await within(20000, 'connect before sign-in', first.connect(transport));
    throw new Error('connected without signing in');
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  if (!seen.authorizationURL) throw new Error('the SDK never sent the person to the authorization URL');
  seen.clientId = kept.client?.client_id;

  // 2. The person consents in the browser, which comes back here.
  const params = await callback.params(90000);
  seen.callback = { state: params.get('state'), iss: params.get('iss'), error: params.get('error'), hasCode: !!params.get('code') };
  if (params.get('error')) throw new Error(`authorization refused: ${params.get('error')} ${params.get('error_description')}`);
  if (params.get('state') !== state) throw new Error(`state ${params.get('state')} is not the one sent (${state})`);
  await within(10000, 'finishAuth', transport.finishAuth(params.get('code')));
  const firstTokens = kept.tokens;
  seen.tokens = { access: firstTokens.access_token, refresh: firstTokens.refresh_token, type: firstTokens.token_type, scope: firstTokens.scope, expiresIn: firstTokens.expires_in };

  // 3. Connected, with the grant's role.
  Object.assign(seen, await connectAndCall('after sign-in'));

  // 4. Refresh through the SDK's own path (what its transport does on a
  // 401): auth() with stored tokens posts the refresh token.
  const result = await within(10000, 'refresh', auth(provider, { serverUrl: new URL(mcpURL) }));
  seen.refresh = { result, access: kept.tokens.access_token, refresh: kept.tokens.refresh_token, redirects: seen.redirects };
  if (result !== 'AUTHORIZED') throw new Error(`refresh: auth() answered ${result}`);
  seen.afterRefresh = await connectAndCall('after refresh');

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

  // 6. The SDK itself, on the revoked access token alone (no refresh token
  // to fall back on), is refused too.
  const lone = {
    ...provider,
    tokens: () => ({ access_token: kept.tokens.access_token, token_type: 'Bearer' }),
    saveTokens: () => {},
    redirectToAuthorization: () => {
      seen.afterRevoke.sentBackToConsent = true;
    }
  };
  const again = new Client({ name: 'atrium-interop-sdk1-oauth', version: '1.0.0' }, { capabilities: {} });
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
  console.error(`oauth-sdk1: ${err?.stack ?? err}`);
  console.error(`seen so far: ${JSON.stringify(seen)}`);
  process.exit(1);
}

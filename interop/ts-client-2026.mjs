// The official TypeScript client 2.x (@modelcontextprotocol/client, pinned in
// package.json) against a running Atrium, in the 2026-07-28 era: automatic
// version negotiation, server/discover, tool calls, resources/read and a
// subscriptions/listen stream that hears a page change.
//
// Usage: node ts-client-2026.mjs URL TOKEN   (driven by e2e/interop_test.go)
// Prints one JSON object of what it saw on stdout; exits 1 on any failure.
// Every wait is bounded; only URL is contacted.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: node ts-client-2026.mjs URL TOKEN');
  process.exit(2);
}

// within rejects when p has not settled after ms.
function within(ms, what, p) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function structured(result, tool) {
  if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.structuredContent ?? result.content)}`);
  return result.structuredContent;
}

const client = new Client(
  { name: 'atrium-interop-ts2', version: '1.0.0' },
  { capabilities: {}, versionNegotiation: { mode: 'auto' } }
);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } }
});

const seen = {};
try {
  await within(20000, 'connect', client.connect(transport));
  seen.negotiated = client.getNegotiatedProtocolVersion();
  seen.server = client.getServerVersion()?.name;

  const discovered = await within(10000, 'server/discover', client.discover());
  seen.discover = {
    versions: discovered.supportedVersions,
    name: discovered.serverInfo?.name ?? discovered._meta?.['io.modelcontextprotocol/serverInfo']?.name,
    tools: !!discovered.capabilities?.tools,
    subscribe: !!discovered.capabilities?.resources?.subscribe
  };

  const who = structured(await within(10000, 'whoami', client.callTool({ name: 'whoami', arguments: {} })), 'whoami');
  seen.whoami = { protocol: who.protocol_version, workspace: who.workspace, handle: who.principal?.handle };

  const tools = await within(10000, 'tools/list', client.listTools());
  seen.tools = tools.tools.length;

  const page = structured(
    await within(10000, 'create_page', client.callTool({ name: 'create_page', arguments: { title: 'Listen probe', content: 'First.\n' } })),
    'create_page'
  );
  const uri = 'atrium://pages/' + page.path.split('/').map(encodeURIComponent).join('/');
  const read = await within(10000, 'resources/read', client.readResource({ uri }, { cacheMode: 'bypass' }));
  seen.read = { text: read.contents[0]?.text, cacheScope: read.cacheScope };

  // A change made through any surface reaches the listen stream.
  const updated = new Promise((resolve) => {
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      if (n.params.uri === uri) resolve(n.params.uri);
    });
  });
  const sub = await within(10000, 'subscriptions/listen', client.listen({ resourceSubscriptions: [uri], toolsListChanged: true }));
  seen.honored = sub.honoredFilter;
  structured(
    await within(10000, 'edit_page', client.callTool({ name: 'edit_page', arguments: { path: page.path, operations: [{ op: 'append', text: 'Second.\n' }] } })),
    'edit_page'
  );
  seen.updated = await within(10000, 'notifications/resources/updated', updated);
  await sub.close();
  seen.closed = await within(10000, 'subscription close', sub.closed);

  await client.close();
  console.log(JSON.stringify(seen));
} catch (err) {
  console.error(`ts-client-2026: ${err?.stack ?? err}`);
  console.error(`seen so far: ${JSON.stringify(seen)}`);
  process.exit(1);
}

// What an open stream's provider call keeps: node's Agent keeps the options a request was made with, in the
// closures of the listeners it puts on the socket, for the socket's whole life; got names ~45 options, most
// undefined (its TLS and cache ones), a dictionary of ~3 KB per connection, so the gateway hands node only those
// got set (src/wire/native-request.ts). And got's request keeps the options object it made the request with,
// which nothing reads once the response has come (src/routing/upstream.ts). Read from a real heap snapshot of
// this process with one stream open.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/**
 * The property names of every object a closure context holds as its variable `options` (and the bytes of its
 * dictionary, when it is one), and how many objects'
 * `_requestOptions` (got's request) is an object.
 */
function heldOptions(file: string): { contexts: { keys: string[]; bytes: number }[]; requestOptions: number } {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const { node_fields: nodeFields, edge_fields: edgeFields, edge_types: [edgeTypes] } = heap.snapshot.meta;
  const edgeCountAt = nodeFields.indexOf('edge_count');
  const [typeAt, nameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((field) => edgeFields.indexOf(field)) as [number, number, number];
  const firstEdge: number[] = [];
  for (let node = 0, edge = 0; node < heap.nodes.length; node += nodeFields.length) {
    firstEdge[node] = edge;
    edge += heap.nodes[node + edgeCountAt]! * edgeFields.length;
  }
  const edgesOf = (node: number) => {
    const found: { type: string; name: string; to: number }[] = [];
    const end = firstEdge[node]! + heap.nodes[node + edgeCountAt]! * edgeFields.length;
    for (let edge = firstEdge[node]!; edge < end; edge += edgeFields.length) {
      found.push({ type: edgeTypes[heap.edges[edge + typeAt]!]!, name: heap.strings[heap.edges[edge + nameAt]!] ?? '', to: heap.edges[edge + toAt]! });
    }
    return found;
  };
  const typeOf = (node: number) => heap.snapshot.meta.node_types[0][heap.nodes[node + nodeFields.indexOf('type')]!];
  const selfSizeAt = nodeFields.indexOf('self_size');
  const contexts: { keys: string[]; bytes: number }[] = [];
  let requestOptions = 0;
  for (let node = 0; node < heap.nodes.length; node += nodeFields.length) {
    for (const edge of edgesOf(node)) {
      if (edge.type === 'context' && edge.name === 'options') {
        const held = edgesOf(edge.to);
        const dictionary = held.find((e) => e.type === 'internal' && e.name === 'properties');
        contexts.push({ keys: held.filter((e) => e.type === 'property').map((e) => e.name), bytes: dictionary ? heap.nodes[dictionary.to + selfSizeAt]! : 0 });
      }
      if (edge.type === 'property' && edge.name === '_requestOptions' && typeOf(edge.to) === 'object') requestOptions++;
    }
  }
  return { contexts, requestOptions };
}

t.test("an open stream's provider call keeps none of the options got left undefined, nor got's request options", async (t) => {
  let end: () => void = () => {};
  const upstream = await startMockUpstream(
    (_request, res) =>
      new Promise<void>((resolve) => {
        startEventStream(res);
        res.write(sseBody([chunk('gpt-4o-2024-11-20', { role: 'assistant', content: 'Hel' })], { done: false }));
        end = () => {
          res.end(sseBody([chunk('gpt-4o-2024-11-20', { content: 'lo' })]));
          resolve();
        };
      }),
  );
  t.teardown(() => upstream.close());
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => gateway.close());

  const response = await gateway.post({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.equal(response.status, 200, 'the stream is open');
  const reader = response.body!.getReader();
  await reader.read(); // the first event: the provider's connection is in use now

  const file = writeHeapSnapshot(join(tmpdir(), `provider-socket-options-${process.pid}.heapsnapshot`));
  t.teardown(() => rmSync(file, { force: true }));
  const held = heldOptions(file);
  // The Agent's listeners on the provider's socket: their options name the socket's host and agent.
  const agentOptions = held.contexts.filter(({ keys }) => keys.includes('_agentKey'));
  t.ok(agentOptions.length >= 1, "the provider socket's listeners are found in the snapshot");
  for (const { keys, bytes } of agentOptions) {
    t.notOk(keys.includes('dhparam') || keys.includes('ALPNProtocols') || keys.includes('cacheHeuristic'), `no unset TLS or cache option kept (${keys.length} options kept)`);
    // Issue 40, line 5: the URL goes to node as its parts, not as a URL to which node would add these four.
    t.same(keys.filter((key) => ['href', 'search', 'pathname', 'hash'].includes(key)), [], 'no copy of the URL kept beside its parts');
    t.comment(`the options dictionary: ${keys.length} keys, ${bytes} bytes`);
  }

  t.equal(held.requestOptions, 0, "got's request no longer holds the options it made the request with");

  end();
  let text = '';
  for (let piece = await reader.read(); !piece.done; piece = await reader.read()) text += new TextDecoder().decode(piece.value);
  t.match(text, /data: \[DONE\]/, 'the stream ends whole');
});

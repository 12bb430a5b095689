// The server's request and response classes: born on the prototypes Express gives them (so its per-request
// Object.setPrototypeOf moves nothing), with everything Express and node put there still reachable.
import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import { once } from 'node:events';
import express from 'express';
import t, { type Test } from 'tap';
import { serverClassesFor } from '../../src/server-classes.js';

async function listen(t: Test, server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function probeApp() {
  const app = express();
  app.get('/probe', (req, res) => {
    res.set('x-probe', 'set by express').json({
      requestOnAppRequest: Object.getPrototypeOf(req) === app.request,
      responseOnAppResponse: Object.getPrototypeOf(res) === app.response,
      appOfRequest: req.app === app,
      appOfResponse: res.app === app,
      host: req.get('host') ?? null,
      nodeRequest: req instanceof IncomingMessage,
      nodeResponse: res instanceof ServerResponse,
    });
  });
  return app;
}

t.test('requests and responses are born on app.request and app.response, and Express serves them as before', async (t) => {
  const app = probeApp();
  const server = createServer({ ...serverClassesFor(app) }, app);
  const born: boolean[] = [];
  // Before Express's handler: what node made.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => born.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response));
  const origin = await listen(t, server);
  const response = await fetch(`${origin}/probe`);
  t.equal(response.status, 200);
  t.equal(response.headers.get('x-probe'), 'set by express', "Express's response methods");
  t.same(await response.json(), {
    requestOnAppRequest: true,
    responseOnAppResponse: true,
    appOfRequest: true,
    appOfResponse: true,
    host: origin.slice('http://'.length),
    nodeRequest: true,
    nodeResponse: true,
  });
  t.same(born, [true, true], 'node made them on those prototypes already');
  t.equal(Object.getPrototypeOf(Object.getPrototypeOf(app.request)), IncomingMessage.prototype, "app.request's chain: Express's request methods, then node's");
  t.equal(Object.getPrototypeOf(Object.getPrototypeOf(app.response)), ServerResponse.prototype);
});

t.test('a server made without the classes (a test harness) is served the same', async (t) => {
  const app = probeApp();
  serverClassesFor(app);
  const origin = await listen(t, createServer(app));
  const response = await fetch(`${origin}/probe`);
  t.equal(response.status, 200);
  t.match(await response.json(), { requestOnAppRequest: true, responseOnAppResponse: true, appOfRequest: true, nodeRequest: true });
});

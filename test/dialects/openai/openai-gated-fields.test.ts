// On /v1/chat/completions to an openai-dialect provider, a service tier that bills more and the search models' web
// searches pass only where routes.yaml allow_fields lists them; tiers that cannot cost more pass byte for byte.
import { BadRequestError } from 'openai';
import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { envelopeOf } from '../../helpers/gateway.js';
import { GATED_ROUTES, sentBody, startGatedRig } from './openai-gated-rig.js';

const HI = [{ role: 'user' as const, content: 'hi' }];
const SEARCH = { search_context_size: 'high', user_location: { type: 'approximate', approximate: { country: 'NO' } } };

t.test('service_tier priority, scale or a tier the gateway does not know: a 400 naming service_tier, nothing sent', async (t) => {
  const { client, upstream } = await startGatedRig(t);
  for (const tier of ['priority', 'scale', 'turbo']) {
    const error = await client.chat.completions.create({ model: 'oai/gpt', messages: HI, service_tier: tier as 'priority' }).catch((caught: unknown) => caught);
    t.ok(error instanceof BadRequestError, `${tier}: a typed 400`);
    t.match((error as BadRequestError).error, {
      param: 'service_tier',
      code: 'unsupported_parameter',
      gateway_code: 'unsupported_parameter',
      origin: 'gateway',
      message: new RegExp(`^'service_tier' is not allowed for this model: "${tier}" can bill at a higher rate .*routes\\.yaml must allow it \\(allow_fields on the model or its provider\\)`),
    }, `${tier}: named, saying why and what would allow it`);
  }
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');
});

t.test('service_tier auto, default, flex and null cannot cost more: they reach the provider byte for byte', async (t) => {
  const { gateway, upstream } = await startGatedRig(t);
  for (const tier of ['"auto"', '"default"', '"flex"', 'null']) {
    const body = (model: string) => `{"model":"${model}", "service_tier" : ${tier},"messages":[{"role":"user","content":"hi"}],"temperature":1.0}`;
    const response = await gateway.post(body('oai/gpt'));
    t.equal(response.status, 200, tier);
    t.equal(upstream.requests.at(-1)!.body, body('gpt-4.1'), `${tier}: only model changed`);
  }
  const duplicated = await gateway.post('{"model":"oai/gpt","service_tier":"priority","messages":[{"role":"user","content":"hi"}],"service_tier":"default"}');
  t.equal(duplicated.status, 400, 'a priority copy of a duplicated key is refused, whichever copy the provider keeps');
  t.match(await envelopeOf(duplicated), { param: 'service_tier' });
  t.equal(upstream.requests.length, 4, 'only the four requests that cannot cost more were sent');
});

t.test('allow_fields: [service_tier] on the model or on its provider lets priority through, as sent', async (t) => {
  const { client, upstream } = await startGatedRig(t);
  for (const model of ['oai/fast', 'tiered/gpt']) {
    const completion = await client.chat.completions.create({ model, messages: HI, service_tier: 'priority' });
    t.equal(completion.model, model);
    t.equal(sentBody(upstream)['service_tier'], 'priority', `${model}: sent as given`);
  }
  const refused = await client.chat.completions.create({ model: 'oai/search', messages: HI, service_tier: 'priority' }).catch((caught: unknown) => caught);
  t.match((refused as BadRequestError).error, { param: 'service_tier' }, 'allowing web_search_options does not allow service_tier');
  t.equal(upstream.requests.length, 2);
});

t.test('web_search_options: a 400 naming it unless allow_fields lists it on the model or its provider', async (t) => {
  const { client, gateway, upstream } = await startGatedRig(t);
  for (const model of ['oai/gpt', 'oai/fast']) {
    const error = await client.chat.completions.create({ model, messages: HI, web_search_options: {} }).catch((caught: unknown) => caught);
    t.ok(error instanceof BadRequestError, `${model}: a typed 400`);
    t.match((error as BadRequestError).error, {
      param: 'web_search_options',
      gateway_code: 'unsupported_parameter',
      message: /^'web_search_options' is not allowed for this model: the provider runs web searches and bills them, so routes\.yaml must allow it/,
    });
  }
  t.equal(upstream.requests.length, 0, 'nothing reached the provider');
  for (const model of ['oai/search', 'tiered/gpt']) {
    await client.chat.completions.create({ model, messages: HI, web_search_options: SEARCH as never });
    t.strictSame(sentBody(upstream)['web_search_options'], SEARCH, `${model}: sent as given`);
  }
  const unset = await gateway.post({ model: 'oai/gpt', messages: HI, web_search_options: null });
  t.equal(unset.status, 200, 'null means not set: it passes');
  t.equal(upstream.requests.length, 3);
});

t.test('a stream is refused before anything is sent, like a whole answer', async (t) => {
  const { gateway, upstream } = await startGatedRig(t);
  const response = await gateway.post({ model: 'oai/gpt', messages: HI, stream: true, service_tier: 'priority' });
  t.equal(response.status, 400);
  t.match(await envelopeOf(response), { param: 'service_tier', gateway_code: 'unsupported_parameter' });
  t.equal(upstream.requests.length, 0);
});

t.test('the compiler accepts service_tier and web_search_options in an openai provider\'s allow_fields, and names any other at its line', async (t) => {
  const good = compileRoutes(GATED_ROUTES);
  t.ok(good.ok, 'the rig\'s routes compile');
  if (good.ok) {
    t.strictSame(good.tables.models['tiered/gpt']!.allowFields, ['service_tier', 'web_search_options']);
    t.strictSame(good.tables.models['oai/fast']!.allowFields, ['service_tier']);
  }
  const bad = compileRoutes(GATED_ROUTES.replace('allow_fields: [service_tier, web_search_options]', 'allow_fields: [service_tier, web_search_options, mcp_servers]'));
  t.strictSame(bad.ok ? [] : bad.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:11:54: providers.tiered.allow_fields[2]: "mcp_servers" is not a field the openai dialect gates: it gates only built_in_tools, service_tier, web_search_options',
  ]);
});

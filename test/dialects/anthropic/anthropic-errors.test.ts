import t from 'tap';
import { readAnthropicError } from '../../../src/dialects/anthropic/errors.js';

t.test("Anthropic's error bodies: provider_code is the error type, the message verbatim", async (t) => {
  const documented: [string, string][] = [
    ['invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'],
    ['authentication_error', 'invalid x-api-key'],
    ['billing_error', 'Your credit balance is too low.'],
    ['permission_error', 'Your API key does not have permission to use the specified resource.'],
    ['not_found_error', 'The requested resource could not be found.'],
    ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
    ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'],
    ['api_error', 'An unexpected error has occurred internal to our systems.'],
    ['overloaded_error', 'Overloaded'],
  ];
  for (const [type, message] of documented) {
    const body = JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });
    t.same(readAnthropicError(body), { message, code: type }, type);
  }
  t.same(readAnthropicError('{"type":"error","error":{"type":"a","type":"api_error","message":"  spaced\\n  "}}'), { message: '  spaced\n  ', code: 'api_error' });
});

t.test('other bodies give what they have, and never throw', async (t) => {
  const table: [string, { message: string | null; code: string | null }][] = [
    ['', { message: null, code: null }],
    ['<html><body>502 Bad Gateway</body></html>', { message: null, code: null }],
    ['null', { message: null, code: null }],
    ['[{"error":{"type":"x"}}]', { message: null, code: null }],
    ['{"error":"upstream connect error"}', { message: 'upstream connect error', code: null }],
    ['{"message":"Forbidden"}', { message: 'Forbidden', code: null }],
    ['{"type":"error","error":{"type":"","message":""}}', { message: null, code: null }],
    ['{"type":"error","error":{"type":529,"message":["x"]},"message":"outer"}', { message: 'outer', code: null }],
    ['{"type":"error","error":{"message":"no type"}}', { message: 'no type', code: null }],
    [`{"error":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, { message: null, code: null }],
  ];
  for (const [body, expected] of table) t.same(readAnthropicError(body), expected, body.slice(0, 60));
});

import t from 'tap';
import { awsDefaultChain, awsKeysFromEnv, isNoSourceError } from '../../../src/routing/auth/aws-credentials.js';
import { isolateAwsEnv, TEST_AWS_KEYS, TEST_AWS_SESSION } from '../../helpers/aws-test-env.js';

// Where an auth: aws provider's credentials come from (issue 38): its variables read at start-up, else the AWS
// default chain, whose fetch is bounded so a slow instance metadata service or STS never holds anything up.

isolateAwsEnv();
// The chain's timers are unref'd (a gateway's server keeps the process up): keep this one up while its tests wait.
const keepAlive = setInterval(() => {}, 1000);
t.teardown(() => clearInterval(keepAlive));

const DEFAULTS = { service: 'bedrock', credentialsEnv: null };
const NAMED = { service: 'bedrock', credentialsEnv: { accessKeyId: 'BRK_ID', secretAccessKey: 'BRK_SECRET', sessionToken: 'BRK_TOKEN' } };

t.test('keys from the environment: both set, neither (the chain), half a pair, named variables', async (t) => {
  t.same(awsKeysFromEnv(DEFAULTS, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' }), { kind: 'static', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } });
  t.same(awsKeysFromEnv(DEFAULTS, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' }), { kind: 'static', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' } });
  t.same(awsKeysFromEnv(DEFAULTS, {}), { kind: 'chain' });
  t.same(awsKeysFromEnv(DEFAULTS, { AWS_SESSION_TOKEN: 'token', AWS_ACCESS_KEY_ID: '' }), { kind: 'chain' }, 'an empty value is unset');
  t.same(awsKeysFromEnv(DEFAULTS, { AWS_ACCESS_KEY_ID: 'AKID' }), { kind: 'missing', names: ['AWS_SECRET_ACCESS_KEY'] });
  t.same(awsKeysFromEnv(DEFAULTS, { AWS_SECRET_ACCESS_KEY: 'secret' }), { kind: 'missing', names: ['AWS_ACCESS_KEY_ID'] });
  t.same(awsKeysFromEnv(NAMED, { BRK_ID: 'AKID', BRK_SECRET: 'secret', AWS_SESSION_TOKEN: 'not this' }), { kind: 'static', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' } });
  t.same(awsKeysFromEnv(NAMED, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' }), { kind: 'missing', names: ['BRK_ID', 'BRK_SECRET'] }, 'named variables never fall back');
});

t.test('a chain that never answers: the fetch gives up at its bound, is logged failing, and nothing is held', async (t) => {
  const states: string[] = [];
  const chain = awsDefaultChain((state, reason) => states.push(`${state}: ${reason}`), { provider: () => new Promise(() => {}), boundMs: 150 });
  t.teardown(() => chain.close());
  const startedAt = Date.now();
  await chain.ready;
  t.ok(Date.now() - startedAt < 5000, 'bounded');
  t.same(states, ['failing: the AWS default credential chain gave nothing within 150 ms']);
  t.equal(chain.current(), undefined);
  t.equal(chain.unconfigured, false, 'a slow source is failing, not absent: 503 provider_auth_failed');
});

t.test('no source at all is unconfigured; a source found later serves, and its secrets are redacted', async (t) => {
  let answer: () => Promise<typeof TEST_AWS_SESSION & { expiration?: Date }> = async () => {
    throw Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' });
  };
  const states: string[] = [];
  const chain = awsDefaultChain((state) => states.push(state), { provider: () => answer() });
  t.teardown(() => chain.close());
  await chain.ready;
  t.equal(chain.unconfigured, true);
  t.ok(isNoSourceError(new Error('Could not load credentials from any providers')));
  answer = async () => ({ ...TEST_AWS_SESSION, expiration: new Date(Date.now() + 3600_000) });
  // The retry comes on the back-off (1 s): wait for its event, the state change.
  await new Promise<void>((resolve) => {
    const look = setInterval(() => states.includes('ok') && (clearInterval(look), resolve()), 20);
  });
  t.equal(chain.unconfigured, false);
  t.equal(chain.current()?.accessKeyId, TEST_AWS_SESSION.accessKeyId);
  t.equal(chain.redact(`a ${TEST_AWS_SESSION.sessionToken} b ${TEST_AWS_SESSION.secretAccessKey}`), 'a [redacted] b [redacted]');
  t.equal(chain.redact(TEST_AWS_KEYS.secretAccessKey), TEST_AWS_KEYS.secretAccessKey, 'only what the chain gave');
});

import t from 'tap';
import { ConfigError, readServerConfig } from '../../src/server-config.js';

const MiB = 1024 * 1024;

t.test('body limits: defaults sized for the shipped 512 MiB pod', async (t) => {
  t.match(readServerConfig({}), { maxBodyBytes: 16 * MiB, maxJsonDepth: 128, maxJsonValues: 200_000, maxBodyBytesInFlight: 32 * MiB });
});

t.test('MAX_JSON_DEPTH, MAX_JSON_VALUES and MAX_BODY_BYTES_IN_FLIGHT are read and checked', async (t) => {
  t.match(readServerConfig({ MAX_JSON_DEPTH: '64', MAX_JSON_VALUES: '50000', MAX_BODY_BYTES_IN_FLIGHT: String(100 * MiB) }), {
    maxJsonDepth: 64,
    maxJsonValues: 50_000,
    maxBodyBytesInFlight: 100 * MiB,
  });
  t.throws(() => readServerConfig({ MAX_JSON_DEPTH: '0' }), /MAX_JSON_DEPTH must be an integer from 1/);
  t.throws(() => readServerConfig({ MAX_JSON_VALUES: 'many' }), /MAX_JSON_VALUES must be an integer/);
});

t.test('the budget must hold one request of the largest size and value count', async (t) => {
  // 16 MiB + 16 x 200,000: one such request would otherwise be answered 503 (retry) forever.
  t.throws(() => readServerConfig({ MAX_BODY_BYTES_IN_FLIGHT: String(16 * MiB) }), new ConfigError(
    `MAX_BODY_BYTES_IN_FLIGHT must be at least MAX_BODY_BYTES + 16 x MAX_JSON_VALUES (${16 * MiB + 3_200_000}), got ${16 * MiB}`,
  ));
  t.equal(readServerConfig({ MAX_BODY_BYTES_IN_FLIGHT: String(16 * MiB + 3_200_000) }).maxBodyBytesInFlight, 16 * MiB + 3_200_000);
  // Raising MAX_BODY_BYTES alone raises the default budget with it.
  t.equal(readServerConfig({ MAX_BODY_BYTES: String(64 * MiB) }).maxBodyBytesInFlight, 64 * MiB + 3_200_000);
});

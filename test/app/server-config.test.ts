import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { CONFIG_DEFAULTS, ConfigError, defaultListenBacklog, isLoopback, readServerConfig } from '../../src/server-config.js';
import { tempDir } from '../helpers/temp-dir.js';

t.test('defaults: loopback, port 8080, anonymous, keep-alive longer than a load balancer idle timeout', async (t) => {
  const config = readServerConfig({});
  t.match(config, { host: '127.0.0.1', port: 8080, callerKeys: [], workers: 1, shutdownGraceMs: 30_000, logLevel: 'info' });
  t.ok(config.keepAliveTimeoutMs > 60_000);
  t.ok(config.headersTimeoutMs <= 10_000 && config.requestTimeoutMs <= 30_000, 'a slow sender loses its socket within seconds');
  t.equal(CONFIG_DEFAULTS.port, 8080);
});

t.test('GATEWAY_API_KEYS is comma-separated, trimmed', async (t) => {
  t.same(readServerConfig({ GATEWAY_API_KEYS: ' a1 , b2,,c3 ' }).callerKeys, ['a1', 'b2', 'c3']);
});

t.test('GATEWAY_API_KEYS_FILE: one key per line, comments and blank lines ignored, CRLF and spaces trimmed', async (t) => {
  const dir = tempDir('gw-keys');
  const file = join(dir, 'keys');
  writeFileSync(file, '# ops keys\r\n  key-one  \r\n\r\nkey-two\n   # old key removed\nkey-three');
  t.same(readServerConfig({ GATEWAY_API_KEYS_FILE: file }).callerKeys, ['key-one', 'key-two', 'key-three']);
  t.throws(() => readServerConfig({ GATEWAY_API_KEYS_FILE: join(dir, 'missing') }), /cannot read GATEWAY_API_KEYS_FILE/);
  t.throws(() => readServerConfig({ GATEWAY_API_KEYS_FILE: file, GATEWAY_API_KEYS: 'x' }), ConfigError);
});

t.test('anonymous only on loopback unless GATEWAY_ALLOW_ANONYMOUS=true', async (t) => {
  for (const host of ['127.0.0.1', '127.10.0.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) t.ok(isLoopback(host), host);
  for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.com', '128.0.0.1']) t.notOk(isLoopback(host), host);
  t.throws(() => readServerConfig({ HOST: '0.0.0.0' }), /refusing to serve anonymously on 0\.0\.0\.0/);
  t.equal(readServerConfig({ HOST: '0.0.0.0', GATEWAY_ALLOW_ANONYMOUS: 'true' }).host, '0.0.0.0');
  t.equal(readServerConfig({ HOST: '0.0.0.0', GATEWAY_API_KEYS: 'k' }).host, '0.0.0.0');
});

t.test('bad values are refused with the variable named', async (t) => {
  t.throws(() => readServerConfig({ PORT: 'eighty' }), /PORT must be an integer/);
  t.throws(() => readServerConfig({ PORT: '70000' }), /PORT/);
  t.throws(() => readServerConfig({ MAX_BODY_BYTES: '-1' }), /MAX_BODY_BYTES/);
  t.throws(() => readServerConfig({ HEADERS_TIMEOUT_MS: '50000', REQUEST_TIMEOUT_MS: '1000' }), /HEADERS_TIMEOUT_MS must not exceed/);
  t.throws(() => readServerConfig({ LOG_LEVEL: 'verbose' }), /LOG_LEVEL/);
  t.throws(() => readServerConfig({ GATEWAY_API_KEYS: 'has space' }), /white space/);
  t.ok(readServerConfig({ WORKERS: 'auto' }).workers >= 1);
});

t.test('caller keys configured but none usable is a start-up error that says so, on any HOST', async (t) => {
  const dir = tempDir('gw-keys');
  const empty = join(dir, 'empty');
  writeFileSync(empty, '');
  const commentsOnly = join(dir, 'comments-only');
  writeFileSync(commentsOnly, '# keys go here\r\n\n   \n  # one per line\n');
  for (const host of ['127.0.0.1', '0.0.0.0']) {
    for (const inline of [',', ' , ,', '   ']) {
      t.throws(() => readServerConfig({ HOST: host, GATEWAY_API_KEYS: inline }), {
        name: 'ConfigError',
        message: 'GATEWAY_API_KEYS is set but holds no key (only commas and white space); give at least one key, or unset it to serve anonymously',
      }, `${host} ${JSON.stringify(inline)}`);
    }
    for (const file of [empty, commentsOnly]) {
      t.throws(() => readServerConfig({ HOST: host, GATEWAY_API_KEYS_FILE: file }), {
        name: 'ConfigError',
        message: `GATEWAY_API_KEYS_FILE ${file} holds no key (only blank lines and # comments); give at least one key, or unset it to serve anonymously`,
      }, `${host} ${file}`);
    }
  }
  t.same(readServerConfig({ GATEWAY_API_KEYS: '' }).callerKeys, [], 'an empty value is unset, as for every variable');
});

t.test('CORS_ORIGINS: off by default, exact origins or *, refused when it is not what a browser sends', async (t) => {
  t.strictSame(readServerConfig({}).corsOrigins, []);
  t.strictSame(readServerConfig({ CORS_ORIGINS: '' }).corsOrigins, []);
  t.equal(readServerConfig({ CORS_ORIGINS: ' * ' }).corsOrigins, '*');
  t.strictSame(readServerConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,http://[::1]:3000' }).corsOrigins, [
    'https://app.example.com',
    'http://localhost:5173',
    'http://[::1]:3000',
  ]);
  t.strictSame(readServerConfig({ CORS_ORIGINS: 'chrome-extension://abcdefghijklmnop' }).corsOrigins, ['chrome-extension://abcdefghijklmnop']);
  const refusals: [string, RegExp][] = [
    ['https://app.example.com/', /"https:\/\/app\.example\.com\/" is not an origin as a browser sends it.*try "https:\/\/app\.example\.com"/],
    ['https://App.Example.com', /try "https:\/\/app\.example\.com"/],
    ['https://app.example.com:443', /try "https:\/\/app\.example\.com"/],
    ['https://app.example.com/path', /not an origin/],
    ['app.example.com', /not an origin/],
    ['null', /not an origin/],
    ['https://user@app.example.com', /not an origin/],
    ['*, https://app.example.com', /\* stands alone/],
    [',', /CORS_ORIGINS is set but holds no origin/],
  ];
  for (const [value, message] of refusals) t.throws(() => readServerConfig({ CORS_ORIGINS: value }), { name: 'ConfigError', message }, value);
});

t.test('LISTEN_BACKLOG: by default the kernel limit (net.core.somaxconn), else Node’s 511; bounded', async (t) => {
  t.equal(defaultListenBacklog(() => '4096\n'), 4096);
  t.equal(defaultListenBacklog(() => '65535'), 65535);
  t.equal(defaultListenBacklog(() => ''), 511, 'unreadable value');
  t.equal(defaultListenBacklog(() => '0'), 511);
  t.equal(defaultListenBacklog(() => { throw new Error('ENOENT: no /proc here'); }), 511, 'no /proc (not Linux)');
  t.equal(readServerConfig({ LISTEN_BACKLOG: '20000' }).listenBacklog, 20_000);
  t.equal(readServerConfig({}).listenBacklog, defaultListenBacklog());
  t.throws(() => readServerConfig({ LISTEN_BACKLOG: '0' }), /LISTEN_BACKLOG must be an integer from 1 to 2147483647/);
  t.throws(() => readServerConfig({ LISTEN_BACKLOG: '2147483648' }), ConfigError);
});

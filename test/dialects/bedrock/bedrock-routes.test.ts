import t from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';

// The routes.yaml keys of the bedrock dialect, compiled by the real compiler: tables when right, line:col when wrong.

const ERRORS = `errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;

function compile(providers: string, models: string) {
  return compileRoutes(`version: 1\nproviders:\n${providers}models:\n${models}${ERRORS}`);
}

function problems(providers: string, models: string): string[] {
  const result = compile(providers, models);
  return result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
}

t.test('a bedrock provider with only a region is valid: auth aws, the region kept, its default base URL', async (t) => {
  const result = compile(
    `  brk:
    dialect: bedrock
    region: us-west-2
  gov:
    dialect: bedrock
    region: us-gov-west-1
    auth: aws
    base_url: http://127.0.0.1:9
    base_url_env: BEDROCK_BASE_URL
  key:
    dialect: bedrock
    region: eu-central-1
    auth: bearer
    api_key_env: AWS_BEARER_TOKEN_BEDROCK
`,
    `  brk/sonnet: { upstream_model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", max_output_tokens: 64000, reasoning: budget }
  gov/nova: { upstream_model: amazon.nova-pro-v1:0 }
  key/llama: { upstream_model: meta.llama3-70b-instruct-v1:0 }
`,
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const { providers, models } = result.tables;
  t.same(providers['brk']!.dialect, 'bedrock');
  t.same(providers['brk']!.auth, { header: 'authorization', scheme: 'aws' }, 'auth aws is the default');
  t.equal(providers['brk']!.region, 'us-west-2');
  t.equal(providers['brk']!.endpoints[0]!.baseUrl, 'https://bedrock-runtime.us-west-2.amazonaws.com');
  t.same(providers['gov']!.auth, { header: 'authorization', scheme: 'aws' });
  t.equal(providers['gov']!.endpoints[0]!.baseUrl, 'http://127.0.0.1:9');
  t.equal(providers['gov']!.endpoints[0]!.baseUrlEnv, 'BEDROCK_BASE_URL');
  t.same(providers['key']!.auth, { header: 'authorization', scheme: 'bearer' });
  t.equal(providers['key']!.endpoints[0]!.apiKeyEnv, 'AWS_BEARER_TOKEN_BEDROCK');
  t.equal(models['brk/sonnet']!.upstreamModel, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0');
  t.equal(models['brk/sonnet']!.reasoning, 'budget');
  t.equal(providers['key']!.region, 'eu-central-1');
});

t.test('a missing region at the provider, a malformed one at its line, misplaced keys at theirs', async (t) => {
  t.strictSame(
    problems(
      `  brk:
    dialect: bedrock
  bad:
    dialect: bedrock
    region: US-East-1
  oa:
    base_url: https://api.openai.com/v1
    region: us-east-1
    auth: aws
  keyed:
    dialect: bedrock
    region: us-east-1
    api_key_env: SOME_KEY
    headers: { X-Amz-Date: "20250101T000000Z" }
  bearer:
    dialect: bedrock
    region: us-east-1
    auth: bearer
`,
      `  brk/a: { reasoning: adaptive, max_output_tokens: 100 }
  brk/b: { reasoning: budget }
`,
    ),
    [
      'routes.yaml:3:3: providers.brk: needs region, the AWS region its calls are signed for (e.g. region: us-east-1)',
      'routes.yaml:7:13: providers.bad.region: "US-East-1" is not an AWS region (like us-east-1, eu-central-1 or us-gov-west-1)',
      'routes.yaml:10:5: providers.oa.region: is for providers of the bedrock dialect',
      'routes.yaml:11:11: providers.oa.auth: aws signs for Amazon Bedrock: only on a provider of the bedrock dialect',
      'routes.yaml:15:5: providers.keyed.api_key_env: auth aws (the bedrock default) signs with AWS credentials and sends no key: remove it, or set auth: bearer to send it as a Bedrock API key',
      'routes.yaml:16:16: providers.keyed.headers.X-Amz-Date: is set by the AWS signature and cannot be overridden',
      'routes.yaml:20:5: providers.bearer.auth: needs api_key_env, the key it sends',
      "routes.yaml:22:23: models.\"brk/a\".reasoning: adaptive has no Converse form: a bedrock model takes none or budget (Claude's extended thinking)",
      'routes.yaml:23:12: models."brk/b".reasoning: needs max_output_tokens on a bedrock model (thinking is sent with maxTokens above its budget)',
    ],
  );
});

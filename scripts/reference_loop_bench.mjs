// The peer table's other side (issue 17): the reference TypeScript loop of the design
// (`shared/seed/agent-loop.ts.txt`: `runTool` and `runAgent`, with zod), written here as plain
// JavaScript with the same shapes, timed on the same scenarios as `benches/overhead.rs`:
//
//   npm ci --prefix tests/mcp          # zod comes with the MCP SDK installed there
//   node scripts/reference_loop_bench.mjs
//
// Each case runs in samples of many iterations after a warm-up; the median of the samples'
// time per iteration is printed, in nanoseconds, next to the name of the Rust bench it matches.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../tests/mcp/package.json', import.meta.url))
const { z } = require('zod')

const ARGUMENTS = '{"city":"北京"}'

const tools = [
  {
    name: 'get_weather',
    description: '查询指定城市今天的天气。用户问天气、穿衣、是否带伞时使用。',
    schema: z.object({ city: z.string().describe('城市名，如：北京') }),
    async execute({ city }) {
      return { city, weather: '小雨', temp: 18 }
    },
  },
]
const toolDefs = tools.map((t) => ({
  name: t.name,
  description: t.description,
  parameters: z.toJSONSchema(t.schema, { io: 'input' }),
}))

// One call: any failure becomes a result for the model.
async function runTool(call) {
  const tool = tools.find((t) => t.name === call.name)
  if (!tool) return { content: `不存在工具 ${call.name}`, isError: true }
  try {
    const parsed = tool.schema.safeParse(JSON.parse(call.arguments || '{}'))
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '参数'}：${i.message}`).join('；')
      return { content: `参数校验失败：${detail}`, isError: true }
    }
    const result = await tool.execute(parsed.data)
    const text = typeof result === 'string' ? result : (JSON.stringify(result) ?? '执行成功')
    return { content: text.length > 8000 ? `${text.slice(0, 8000)}\n（结果过长，已截断）` : text, isError: false }
  } catch (err) {
    return { content: `出错：${err instanceof Error ? err.message : String(err)}`, isError: true }
  }
}

const MAX_STEPS = 10

async function runAgent(llm, input) {
  const messages = [
    { role: 'system', content: '你是一个能使用工具的助手。工具出错时根据错误信息调整；无法完成时如实说明，不要编造结果。' },
    { role: 'user', content: input },
  ]
  for (let step = 0; step < MAX_STEPS; step++) {
    const reply = await llm.chat({ messages, tools: toolDefs })
    messages.push(reply)
    if (!reply.toolCalls?.length) return reply.content
    for (const call of reply.toolCalls) {
      const { content, isError } = await runTool(call)
      messages.push({ role: 'tool', toolCallId: call.id, content, isError })
    }
  }
  return `已执行 ${MAX_STEPS} 步仍未完成，请缩小问题范围后重试。`
}

// The benches' instant model: asks for `tool` on every turn before `turns`, then answers,
// deciding from the history's length alone.
const turnsModel = (turns, tool = 'get_weather') => ({
  async chat({ messages }) {
    const turn = (messages.length - 2) / 2 + 1
    if (turn < turns) {
      return { role: 'assistant', content: '', toolCalls: [{ id: 'call', name: tool, arguments: ARGUMENTS }] }
    }
    return { role: 'assistant', content: 'Take an umbrella.' }
  },
})

async function bench(name, iterations, body) {
  for (let i = 0; i < iterations * 5; i++) await body()
  const samples = []
  for (let sample = 0; sample < 101; sample++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) await body()
    samples.push(Number(process.hrtime.bigint() - start) / iterations)
  }
  samples.sort((a, b) => a - b)
  console.log(`${name.padEnd(22)} ${samples[50].toFixed(0).padStart(7)} ns (median of 101 samples)`)
}

const call = { id: 'call_1', name: 'get_weather', arguments: ARGUMENTS }
const unknown = { id: 'call_1', name: 'get_wether', arguments: ARGUMENTS }
const tenSteps = turnsModel(10)
const oneStep = turnsModel(1)
const twoSteps = turnsModel(2)
const twoStepsUnknown = turnsModel(2, 'get_wether')

await bench('dispatch_ok', 20000, () => runTool(call))
await bench('dispatch_unknown_tool', 20000, () => runTool(unknown))
await bench('run1_text', 20000, () => runAgent(oneStep, 'Umbrella?'))
await bench('run2_text', 10000, () => runAgent(twoSteps, 'Umbrella?'))
await bench('run2_unknown_tool', 10000, () => runAgent(twoStepsUnknown, 'Umbrella?'))
await bench('loop_10_steps', 2000, () => runAgent(tenSteps, 'Umbrella?'))

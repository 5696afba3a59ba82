// The development stack's local chat model (scripts/stack.sh; docs/explainer-model.md): a GGUF
// model run on the CPU by llama.cpp through node-llama-cpp's prebuilt binaries, behind the
// OpenAI-compatible endpoints the explainer speaks, on 127.0.0.1 only:
//
//   GET  /health               {"status":"ok"} once the model is loaded
//   GET  /v1/models            the one model, named MODEL_NAME
//   POST /v1/chat/completions  {model, messages, temperature, max_tokens, top_p, seed} ->
//                              a chat.completion with usage; finish_reason "length" when
//                              max_tokens cut the answer
//
// SEQUENCES requests are answered at once (llama.cpp decodes them in one batch; on one thread of
// a 2-core machine two were slower per answer than one at a time, docs/explainer-model.md); more
// wait in arrival order (the explainer's concurrency limit and timeout decide how long a caller
// waits). Each request starts from an empty context: no
// answer leaks into the next. A caller that hangs up (its timeout) stops its answer at the next
// token, and a request whose caller left while it waited is never started: one model answering
// the abandoned would make every caller behind it wait longer and time out in turn.
//
// Usage: node server.mjs MODEL.gguf PORT   (THREADS, default 1; SEQUENCES, default 1;
//        MODEL_NAME, default "local"; CONTEXT, tokens per sequence, default 2048)
import http from "node:http";
import {getLlama, LlamaChat} from "node-llama-cpp";

const [modelPath, port] = process.argv.slice(2);
if (!modelPath || !port) {
  console.error("usage: node server.mjs MODEL.gguf PORT");
  process.exit(2);
}
const modelName = process.env.MODEL_NAME ?? "local";
const threads = Number(process.env.THREADS ?? 1);
const contextSize = Number(process.env.CONTEXT ?? 2048);
const sequences = Number(process.env.SEQUENCES ?? 1);
// The most bytes of one request body: a prompt of the explainer is a few kilobytes.
const MAX_BODY = 256 * 1024;

const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: contextSize * sequences, sequences, threads});
// Free chat sessions, one per sequence; requests wait for one in arrival order.
const free = Array.from({length: sequences}, () => {
  const sequence = context.getSequence();
  return {sequence, chat: new LlamaChat({contextSequence: sequence})};
});
const waiting = [];

async function withSession(work) {
  const session = free.pop() ?? (await new Promise((resolve) => waiting.push(resolve)));
  try {
    return await work(session);
  } finally {
    const next = waiting.shift();
    if (next) next(session);
    else free.push(session);
  }
}

// OpenAI messages as node-llama-cpp's chat history.
function history(messages) {
  return messages.map((m) => {
    const text = typeof m.content === "string"
      ? m.content
      : (m.content ?? []).map((part) => part.text ?? "").join("");
    if (m.role === "system") return {type: "system", text};
    if (m.role === "assistant") return {type: "model", response: [text]};
    return {type: "user", text};
  });
}

async function complete(body, {sequence, chat}, signal) {
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw Object.assign(new Error("messages: a non-empty array is required"), {status: 400});
  }
  signal.throwIfAborted();
  const before = sequence.tokenMeter.getState();
  await sequence.clearHistory();
  const answer = await chat.generateResponse(history(body.messages), {
    maxTokens: body.max_tokens ?? 256,
    temperature: body.temperature ?? 0,
    topP: body.top_p,
    seed: body.seed,
    signal,
  });
  const used = sequence.tokenMeter.diff(before);
  return {
    id: `chatcmpl-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: modelName,
    choices: [{
      index: 0,
      message: {role: "assistant", content: answer.response.trim()},
      finish_reason: answer.metadata.stopReason === "maxTokens" ? "length" : "stop",
    }],
    usage: {
      prompt_tokens: used.usedInputTokens,
      completion_tokens: used.usedOutputTokens,
      total_tokens: used.usedInputTokens + used.usedOutputTokens,
    },
  };
}

http.createServer((req, res) => {
  const send = (status, value) => {
    res.writeHead(status, {"content-type": "application/json"});
    res.end(JSON.stringify(value));
  };
  const fail = (status, message) => send(status, {error: {message, type: "invalid_request_error"}});
  if (req.method === "GET" && req.url === "/health") return send(200, {status: "ok"});
  if (req.method === "GET" && req.url === "/v1/models") {
    return send(200, {object: "list", data: [{id: modelName, object: "model", owned_by: "local"}]});
  }
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") return fail(404, "not found");
  let raw = "";
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) {
      fail(413, `the body is over ${MAX_BODY} bytes`);
      req.destroy();
    } else {
      raw += chunk;
    }
  });
  req.on("end", () => {
    if (size > MAX_BODY) return;
    let body;
    try {
      body = JSON.parse(raw);
    } catch (e) {
      return fail(400, `the body is not JSON: ${e.message}`);
    }
    // The caller hung up before its answer was sent (the response closed unfinished).
    const left = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) left.abort(new Error("the caller hung up"));
    });
    withSession((session) => complete(body, session, left.signal))
      .then((answer) => send(200, answer))
      .catch((e) => {
        if (left.signal.aborted) {
          console.log(`a caller hung up; its answer was stopped or never started`);
        } else {
          fail(e.status ?? 500, String(e.message ?? e));
        }
      });
  });
}).listen(Number(port), "127.0.0.1", () => {
  console.log(`${modelName} (${modelPath}, ${threads} thread(s), ${sequences} sequence(s)) on http://127.0.0.1:${port}/v1`);
});

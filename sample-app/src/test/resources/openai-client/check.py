"""Calls the sample's OpenAI API with the official openai client and prints what it got as JSON.

Usage: check.py BASE_URL PROMPT MAX_TOKENS CHAT_USER_CONTENT
"""

import json
import sys

import openai

base_url, prompt, max_tokens, user = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
client = openai.OpenAI(base_url=base_url, api_key="not-checked", max_retries=0, timeout=60)
messages = [{"role": "user", "content": user}]

models = [model.id for model in client.models.list()]

completion = client.completions.create(model=models[0], prompt=prompt, max_tokens=max_tokens)

stream_text, stream_usage, stream_finish = "", None, None
for chunk in client.completions.create(
    model=models[0],
    prompt=prompt,
    max_tokens=max_tokens,
    stream=True,
    stream_options={"include_usage": True},
):
    if chunk.choices:
        stream_text += chunk.choices[0].text
        stream_finish = chunk.choices[0].finish_reason or stream_finish
    if chunk.usage is not None:
        stream_usage = chunk.usage.completion_tokens

chat = client.chat.completions.create(model=models[0], messages=messages, max_tokens=max_tokens)

chat_stream_text, chat_role, chat_finish = "", None, None
for chunk in client.chat.completions.create(
    model=models[0], messages=messages, max_tokens=max_tokens, stream=True
):
    delta = chunk.choices[0].delta
    chat_role = chat_role or delta.role
    chat_stream_text += delta.content or ""
    chat_finish = chunk.choices[0].finish_reason or chat_finish

print(
    json.dumps(
        {
            "openai_version": openai.__version__,
            "models": models,
            "completion": completion.choices[0].text,
            "stream": stream_text,
            "stream_usage_completion_tokens": stream_usage,
            "stream_finish_reason": stream_finish,
            "chat": chat.choices[0].message.content,
            "chat_role": chat.choices[0].message.role,
            "chat_stream": chat_stream_text,
            "chat_stream_role": chat_role,
            "chat_stream_finish_reason": chat_finish,
        }
    )
)

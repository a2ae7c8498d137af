"""A consumer of subx usage events that is not ours: confluent-kafka and the classes protoc
generates from proto/, nothing else. It reads billing.credit-usage.v1 (or --topic) from the
beginning in a group of its own, checks each message's CloudEvents binary-mode headers, decodes the
protobuf payload, drops redeliveries by ce_id, and sums the credits per account.

It stops when --expect events were read, or when --timeout seconds passed, and prints one JSON
object: {"events": n, "credits": total, "by_account": {...}, "duplicates": n, "schema_ids": n}
(schema_ids: events that carried a schema registry id header, `__value_schema_id`). Exit status 1 when a
message breaks the contract (its first problem on stderr), 2 when fewer events than expected came.
"""

import argparse
import json
import sys
import time
import uuid
from datetime import datetime

from confluent_kafka import Consumer, KafkaError
from subx.events.v1 import credit_usage_pb2

EXPECTED = {
    "ce_specversion": "1.0",
    "ce_source": "//subx/gateway",
    "ce_type": "com.subx.credit-usage.v1",
    "ce_dataschema": "proto:subx.events.v1.CreditUsage",
    "content-type": "application/protobuf",
}


class ContractError(Exception):
    pass


def headers_of(message):
    """The text headers. `__value_schema_id` (a schema registry's id, binary: see docs/events.md) is
    left to registry-aware deserializers; this consumer has the classes and needs no registry."""
    return {
        key: (value or b"").decode("utf-8")
        for key, value in (message.headers() or [])
        if not key.startswith("__")
    }


def has_schema_id(message):
    return any(key == "__value_schema_id" and value for key, value in (message.headers() or []))


def check(message):
    """The decoded event of one message, after checking its headers against its payload."""
    headers = headers_of(message)
    for name, value in EXPECTED.items():
        if headers.get(name) != value:
            raise ContractError(f"{name}: expected {value!r}, got {headers.get(name)!r}")
    event = credit_usage_pb2.CreditUsage()
    event.ParseFromString(message.value())
    if headers.get("ce_id") != event.envelope.event_id or not event.envelope.event_id:
        raise ContractError(f"ce_id {headers.get('ce_id')!r} is not the envelope's event_id")
    if headers.get("ce_subject") != event.envelope.account_id:
        raise ContractError(f"ce_subject {headers.get('ce_subject')!r} is not the account")
    if (message.key() or b"").decode("utf-8") != event.envelope.account_id:
        raise ContractError("the key is not the account")
    datetime.fromisoformat(headers.get("ce_time", "").replace("Z", "+00:00"))
    if event.credits <= 0:
        raise ContractError(f"credits {event.credits} is not positive")
    return event


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", required=True)
    parser.add_argument("--topic", default="billing.credit-usage.v1")
    parser.add_argument("--group", default=f"python-consumer-{uuid.uuid4()}")
    parser.add_argument("--expect", type=int, default=0, help="stop after this many events")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds, at most")
    args = parser.parse_args()

    consumer = Consumer(
        {
            "bootstrap.servers": args.brokers,
            "group.id": args.group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([args.topic])
    seen = set()
    by_account = {}
    duplicates = 0
    schema_ids = 0
    deadline = time.monotonic() + args.timeout
    try:
        while time.monotonic() < deadline and (args.expect == 0 or len(seen) < args.expect):
            message = consumer.poll(min(1.0, max(0.0, deadline - time.monotonic())))
            if message is None:
                continue
            if message.error():
                # The topic may be created after we subscribed: keep polling until the deadline.
                if message.error().code() in (KafkaError._PARTITION_EOF, KafkaError.UNKNOWN_TOPIC_OR_PART):
                    continue
                raise RuntimeError(str(message.error()))
            try:
                event = check(message)
            except (ContractError, ValueError) as error:
                print(f"offset {message.offset()}: {error}", file=sys.stderr)
                return 1
            event_id = event.envelope.event_id
            if event_id in seen:
                duplicates += 1
                continue
            seen.add(event_id)
            schema_ids += 1 if has_schema_id(message) else 0
            account = event.envelope.account_id
            by_account[account] = by_account.get(account, 0) + event.credits
            consumer.commit(message=message, asynchronous=False)
    finally:
        consumer.close()

    total = sum(by_account.values())
    print(
        json.dumps(
            {
                "events": len(seen),
                "credits": total,
                "by_account": by_account,
                "duplicates": duplicates,
                "schema_ids": schema_ids,
            }
        )
    )
    return 2 if len(seen) < args.expect else 0


if __name__ == "__main__":
    sys.exit(main())

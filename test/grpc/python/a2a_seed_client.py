#!/usr/bin/env python3
"""The gRPC seed flow of A2A, as a Python client on Debian's python3-grpcio.

    a2a_seed_client.py --target 127.0.0.1:PORT --pb DIR

DIR holds the protoc --python_out classes of a2a.proto and google/rpc/*.proto
(the jest test builds them with `buf build` + Debian's protoc). The script:
SendStreamingMessage with metadata a2a-version: 1.0, reads the task id from
the first event, follows status and artifact updates, then GetTask; then a
GetTask for an unknown task, whose error it decodes from
grpc-status-details-bin (google.rpc.Status with ErrorInfo). Every step is
printed as one JSON line on stdout.
"""
import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--target", required=True)
parser.add_argument("--pb", required=True, help="directory with the generated *_pb2 modules")
parser.add_argument("--missing-task", default="no-such-task")
args = parser.parse_args()
sys.path.insert(0, args.pb)

import grpc  # noqa: E402  (Debian python3-grpcio)
from google.protobuf import json_format  # noqa: E402  (Debian python3-protobuf)
import a2a_pb2  # noqa: E402
from google.rpc import status_pb2, error_details_pb2  # noqa: E402

SERVICE = "/lf.a2a.v1.A2AService/"
METADATA = (("a2a-version", "1.0"),)


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def state_name(value):
    return a2a_pb2.TaskState.Name(value)


def main():
    with grpc.insecure_channel(args.target) as channel:
        send_streaming = channel.unary_stream(
            SERVICE + "SendStreamingMessage",
            request_serializer=a2a_pb2.SendMessageRequest.SerializeToString,
            response_deserializer=a2a_pb2.StreamResponse.FromString,
        )
        get_task = channel.unary_unary(
            SERVICE + "GetTask",
            request_serializer=a2a_pb2.GetTaskRequest.SerializeToString,
            response_deserializer=a2a_pb2.Task.FromString,
        )

        request = a2a_pb2.SendMessageRequest(
            message=a2a_pb2.Message(
                message_id="py-m1",
                role=a2a_pb2.ROLE_USER,
                parts=[a2a_pb2.Part(text="hello from python")],
            )
        )
        task_id = None
        for event in send_streaming(request, metadata=METADATA, timeout=10):
            kind = event.WhichOneof("payload")
            if task_id is None:
                # The first event names the task: a Task, or an update carrying task_id.
                task_id = event.task.id if kind == "task" else getattr(event, kind).task_id
                emit(step="first", kind=kind, taskId=task_id)
            if kind == "task":
                emit(step="event", kind=kind, taskId=event.task.id, state=state_name(event.task.status.state))
            elif kind == "status_update":
                u = event.status_update
                emit(step="event", kind=kind, taskId=u.task_id, state=state_name(u.status.state))
            elif kind == "artifact_update":
                u = event.artifact_update
                text = "".join(p.text for p in u.artifact.parts)
                emit(step="event", kind=kind, taskId=u.task_id, artifactId=u.artifact.artifact_id, text=text, lastChunk=u.last_chunk)
            elif kind == "message":
                emit(step="event", kind=kind, messageId=event.message.message_id)

        task = get_task(a2a_pb2.GetTaskRequest(id=task_id), metadata=METADATA, timeout=10)
        emit(step="getTask", taskId=task.id, state=state_name(task.status.state),
             artifacts=[a.artifact_id for a in task.artifacts],
             json=json_format.MessageToDict(task))

        try:
            get_task(a2a_pb2.GetTaskRequest(id=args.missing_task), metadata=METADATA, timeout=10)
            emit(step="error", unexpected="GetTask succeeded")
        except grpc.RpcError as err:
            details = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
            status = status_pb2.Status.FromString(details) if details else None
            info = None
            for any_detail in (status.details if status else ()):
                if any_detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                    info = error_details_pb2.ErrorInfo()
                    any_detail.Unpack(info)
            emit(step="error", code=err.code().name, message=err.details(),
                 statusCode=status.code if status else None,
                 reason=info.reason if info else None,
                 domain=info.domain if info else None,
                 metadata=dict(info.metadata) if info else None)


if __name__ == "__main__":
    main()

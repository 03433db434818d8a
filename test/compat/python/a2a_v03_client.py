#!/usr/bin/env python3
"""An A2A 0.3 gRPC client on Debian's python3-grpcio, against a2a.v1.A2AService.

    a2a_v03_client.py --target 127.0.0.1:PORT --pb DIR --push-url URL

DIR holds the protoc --python_out classes of A2A v0.3.0's a2a.proto (package
a2a.v1) and google/rpc/*.proto, which the jest test builds with `buf build` +
Debian's protoc. Like a 0.3 client, it sends no a2a-version metadata. It runs
SendMessage, SendStreamingMessage, GetTask, CancelTask, TaskSubscription, the
four push config RPCs, GetAgentCard and an unknown task's error, printing one
JSON line per step on stdout.
"""
import argparse
import json
import sys
import uuid

parser = argparse.ArgumentParser()
parser.add_argument("--target", required=True)
parser.add_argument("--pb", required=True)
parser.add_argument("--push-url", required=True)
args = parser.parse_args()
sys.path.insert(0, args.pb)

import grpc  # noqa: E402
import a2a_pb2  # noqa: E402
from google.rpc import status_pb2, error_details_pb2  # noqa: E402

SERVICE = "/a2a.v1.A2AService/"


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def state(value):
    return a2a_pb2.TaskState.Name(value)


def message(text):
    return a2a_pb2.Message(message_id=str(uuid.uuid4()), role=a2a_pb2.ROLE_USER, content=[a2a_pb2.Part(text=text)])


def text_of(task):
    return "".join(p.text for a in task.artifacts for p in a.parts)


def main():
    with grpc.insecure_channel(args.target) as channel:
        def unary(name, req, res):
            return channel.unary_unary(SERVICE + name, request_serializer=req.SerializeToString, response_deserializer=res.FromString)

        def streaming(name, req):
            return channel.unary_stream(SERVICE + name, request_serializer=req.SerializeToString, response_deserializer=a2a_pb2.StreamResponse.FromString)

        send = unary("SendMessage", a2a_pb2.SendMessageRequest, a2a_pb2.SendMessageResponse)
        get_task = unary("GetTask", a2a_pb2.GetTaskRequest, a2a_pb2.Task)
        cancel = unary("CancelTask", a2a_pb2.CancelTaskRequest, a2a_pb2.Task)
        blocking = a2a_pb2.SendMessageConfiguration(blocking=True)

        sent = send(a2a_pb2.SendMessageRequest(request=message("hello from python"), configuration=blocking))
        task = sent.task
        emit(step="send", kind=sent.WhichOneof("payload"), state=state(task.status.state), text=text_of(task))

        events = list(streaming("SendStreamingMessage", a2a_pb2.SendMessageRequest)(a2a_pb2.SendMessageRequest(request=message("one two"))))
        last = events[-1].status_update
        emit(step="stream", kinds=[e.WhichOneof("payload") for e in events], last=state(last.status.state), final=last.final)

        got = get_task(a2a_pb2.GetTaskRequest(name="tasks/" + task.id, history_length=1))
        emit(step="get", id=got.id == task.id, state=state(got.status.state), history=len(got.history), text=text_of(got))

        held = send(a2a_pb2.SendMessageRequest(request=message("hold for cancel"))).task
        canceled = cancel(a2a_pb2.CancelTaskRequest(name="tasks/" + held.id))
        emit(step="cancel", before=state(held.status.state), after=state(canceled.status.state))

        held = send(a2a_pb2.SendMessageRequest(request=message("hold for subscription"))).task
        subscription = streaming("TaskSubscription", a2a_pb2.TaskSubscriptionRequest)(a2a_pb2.TaskSubscriptionRequest(name="tasks/" + held.id))
        first = next(subscription)
        cancel(a2a_pb2.CancelTaskRequest(name="tasks/" + held.id))
        rest = list(subscription)
        emit(step="subscribe", first=first.WhichOneof("payload"), firstId=first.task.id == held.id, last=state(rest[-1].status_update.status.state), final=rest[-1].status_update.final)

        held = send(a2a_pb2.SendMessageRequest(request=message("hold for push"))).task
        create = unary("CreateTaskPushNotificationConfig", a2a_pb2.CreateTaskPushNotificationConfigRequest, a2a_pb2.TaskPushNotificationConfig)
        config = a2a_pb2.TaskPushNotificationConfig(push_notification_config=a2a_pb2.PushNotificationConfig(url=args.push_url, token="tok", authentication=a2a_pb2.AuthenticationInfo(schemes=["Bearer"], credentials="c")))
        made = create(a2a_pb2.CreateTaskPushNotificationConfigRequest(parent="tasks/" + held.id, config_id="cfg-1", config=config))
        name = "tasks/%s/pushNotificationConfigs/cfg-1" % held.id
        got_config = unary("GetTaskPushNotificationConfig", a2a_pb2.GetTaskPushNotificationConfigRequest, a2a_pb2.TaskPushNotificationConfig)(a2a_pb2.GetTaskPushNotificationConfigRequest(name=name))
        listing = unary("ListTaskPushNotificationConfig", a2a_pb2.ListTaskPushNotificationConfigRequest, a2a_pb2.ListTaskPushNotificationConfigResponse)
        listed = listing(a2a_pb2.ListTaskPushNotificationConfigRequest(parent="tasks/" + held.id))
        from google.protobuf import empty_pb2
        unary("DeleteTaskPushNotificationConfig", a2a_pb2.DeleteTaskPushNotificationConfigRequest, empty_pb2.Empty)(a2a_pb2.DeleteTaskPushNotificationConfigRequest(name=name))
        after = listing(a2a_pb2.ListTaskPushNotificationConfigRequest(parent="tasks/" + held.id))
        cancel(a2a_pb2.CancelTaskRequest(name="tasks/" + held.id))
        emit(step="push", created=made.name == name, url=made.push_notification_config.url == args.push_url, schemes=list(made.push_notification_config.authentication.schemes),
             got=got_config.push_notification_config.token, listed=[c.name == name for c in listed.configs], after=len(after.configs))

        card = unary("GetAgentCard", a2a_pb2.GetAgentCardRequest, a2a_pb2.AgentCard)(a2a_pb2.GetAgentCardRequest())
        emit(step="card", name=card.name, protocolVersion=card.protocol_version, preferredTransport=card.preferred_transport, transports=[i.transport for i in card.additional_interfaces])

        try:
            get_task(a2a_pb2.GetTaskRequest(name="tasks/no-such-task"))
            emit(step="error", code=None)
        except grpc.RpcError as err:
            reason = None
            for key, value in err.trailing_metadata() or ():
                if key == "grpc-status-details-bin":
                    status = status_pb2.Status.FromString(value)
                    for detail in status.details:
                        info = error_details_pb2.ErrorInfo()
                        if detail.Unpack(info):
                            reason = info.reason
            emit(step="error", code=err.code().name, reason=reason)


main()

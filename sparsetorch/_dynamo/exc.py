"""torch._dynamo.exc: the compiler's exception types."""

__all__ = ["InvalidBackend", "TorchDynamoException", "Unsupported"]


class TorchDynamoException(RuntimeError):
    pass


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class Unsupported(TorchDynamoException):
    pass

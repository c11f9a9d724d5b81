"""A Pulsar Function exactly as Pulsar's Python docs write one: runs unchanged on Magnetar.

    magnetar functions create --py examples/functions/pulsar_exclamation_function.py \
        --classname pulsar_exclamation_function.ExclamationFunction \
        --inputs words --output loud --name exclamation
    magnetar functions trigger --name exclamation --trigger-value hello    # hello!

Inside a function, ``from pulsar import Function`` gives Magnetar's Functions API (whether
or not pulsar-client is installed); the SDK is ``import magnetar as pulsar`` elsewhere.
"""

from pulsar import Function


class ExclamationFunction(Function):
    def __init__(self):
        pass

    def process(self, input, context):
        return input + "!"

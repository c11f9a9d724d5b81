"""A native Python function as Pulsar's docs write one (no class, no context): Magnetar calls
``process`` with each input and publishes its return value. ``--classname`` names the
module, as in Pulsar's docs (``pulsar_native_function.process`` works too).

    magnetar functions create --py examples/functions/pulsar_native_function.py \
        --classname pulsar_native_function --inputs words --name myfunc
    magnetar functions trigger --name myfunc --trigger-value "hello world"
"""


def process(input):
    return "This function has been triggered with a value of {0}".format(input)  # noqa: UP030, UP032 - as in Pulsar's docs

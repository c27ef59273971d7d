"""The object files of mxcore's libraries, for linking them into one library.

A cc_binary(linkshared = 1) that depends on cc_libraries takes from their
archives only the objects something in the binary refers to, and a library
refers to nothing: its API would be missing. Objects listed in srcs are
linked whole, so this rule collects every object of the given targets and
their mxcore dependencies (targets of other repositories, the Debian system
libraries, have none).
"""

def _mxcore_objects_impl(ctx):
    objects = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            if linker_input.owner.workspace_name not in ("", "mxcore"):
                continue
            for library in linker_input.libraries:
                objects.extend(library.pic_objects or library.objects or [])
    return [DefaultInfo(files = depset(objects))]

mxcore_objects = rule(
    implementation = _mxcore_objects_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)

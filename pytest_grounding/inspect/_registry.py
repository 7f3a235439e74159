"""What inspect_ai's entry point (`[project.entry-points.inspect_ai]`) imports: the task, so that
`inspect eval pytest_grounding/grounding` finds it."""

from .task import grounding as grounding

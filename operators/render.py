"""Rendering the scene's animation to MP4 or PNG frames, from the sidebar and from the CLI."""

from __future__ import annotations

from pathlib import Path

import bpy
from bpy.props import EnumProperty, IntProperty, StringProperty

from ..addon.errors import ProcAnimError
from . import paths
from ._base import ProcAnimOperator
from .preferences import preferences

ENGINE_ITEMS = (
    ("WORKBENCH", "Workbench", "Fast solid shading; good for previews"),
    ("EEVEE", "EEVEE", "Real-time rasterised rendering with lights and materials"),
    ("CYCLES", "Cycles", "Path-traced rendering on the CPU; slow but physically lit (mirrors, caustics)"),
)
FORMAT_ITEMS = (
    ("MP4", "MP4 Video", "One H.264 video file"),
    ("PNG", "PNG Frames", "One PNG image per frame in a folder"),
)


def engine_identifier(engine: str) -> str:
    """Blender's engine enum for a portable name; EEVEE is BLENDER_EEVEE_NEXT before 5.0."""
    key = engine.upper()
    if key == "WORKBENCH":
        return "BLENDER_WORKBENCH"
    if key == "CYCLES":
        return "CYCLES"
    if key == "EEVEE":
        return "BLENDER_EEVEE" if bpy.app.version >= (5, 0, 0) else "BLENDER_EEVEE_NEXT"
    raise ProcAnimError(f"unknown render engine {engine!r} (use workbench, eevee or cycles)")


def configure_render(
    scene: bpy.types.Scene,
    output: str | Path,
    engine: str = "WORKBENCH",
    resolution: tuple[int, int] = (640, 360),
    file_format: str = "MP4",
    samples: int = 16,
) -> str:
    """Set the scene's render settings for an animation export; returns the output path used."""
    if scene.camera is None:
        raise ProcAnimError("the scene has no active camera to render from")
    width, height = resolution
    if width < 16 or height < 16:
        raise ProcAnimError(f"resolution {width}x{height} is too small (at least 16x16)")
    video = file_format.upper() == "MP4"
    if video and (width % 2 or height % 2):
        raise ProcAnimError(f"an MP4 (H.264) video needs an even width and height, got {width}x{height}")
    if file_format.upper() not in ("MP4", "PNG"):
        raise ProcAnimError(f"unknown output format {file_format!r} (use MP4 or PNG)")
    # Every check before the first setting is changed, so a refusal leaves the scene as it was.
    out = (
        paths.output_file(str(output), "Render output", ".mp4")
        if video
        else paths.output_folder(str(output), "Render output folder")
    )
    render_engine = engine_identifier(engine)
    if video:
        paths.make_parent(out, "Render output")
    else:
        paths.make_folder(out, "Render output folder")
    if scene.world is None:
        # An empty file has no world, which renders as black; a soft grey sky reads better.
        scene.world = _neutral_world()
    render = scene.render
    render.engine = render_engine
    render.resolution_x, render.resolution_y = int(width), int(height)
    render.resolution_percentage = 100
    if render.engine == "CYCLES":
        scene.cycles.device = "CPU"
        scene.cycles.samples = int(samples)
        scene.cycles.use_denoising = False
    elif render.engine.startswith("BLENDER_EEVEE"):
        scene.eevee.taa_render_samples = int(samples)
    else:
        scene.display.shading.color_type = "MATERIAL"
        scene.display.shading.light = "STUDIO"
    image = render.image_settings
    if video:
        if hasattr(image, "media_type"):  # 5.0 splits images from video
            image.media_type = "VIDEO"
        image.file_format = "FFMPEG"
        render.ffmpeg.format = "MPEG4"
        render.ffmpeg.codec = "H264"
        render.ffmpeg.constant_rate_factor = "MEDIUM"
        # Blender appends the frame range to a video path unless the extension is given.
        render.use_file_extension = False
        render.filepath = str(out)
    else:
        if hasattr(image, "media_type"):
            image.media_type = "IMAGE"
        image.file_format = "PNG"
        render.use_file_extension = True
        render.filepath = str(out / "frame_")
    return str(out)


def _neutral_world() -> bpy.types.World:
    world = bpy.data.worlds.get("ProcAnim Sky") or bpy.data.worlds.new("ProcAnim Sky")
    world.color = (0.32, 0.36, 0.42)
    if world.node_tree is None:  # before 5.0 a new world has no node tree yet
        world.use_nodes = True
    background = next((n for n in world.node_tree.nodes if n.type == "BACKGROUND"), None)
    if background is not None:
        background.inputs["Color"].default_value = (0.32, 0.36, 0.42, 1.0)
        background.inputs["Strength"].default_value = 0.8
    return world


def render_animation(
    scene: bpy.types.Scene,
    output: str | Path,
    engine: str = "WORKBENCH",
    resolution: tuple[int, int] = (640, 360),
    file_format: str = "MP4",
    samples: int = 16,
) -> str:
    """Render the scene's frame range, blocking; returns the file or folder written."""
    path = configure_render(scene, output, engine, resolution, file_format, samples)
    with bpy.context.temp_override(scene=scene):
        bpy.ops.render.render(animation=True, scene=scene.name)
    return path


class RenderOptions:
    """The export settings, shared by the operator and the sidebar's settings group."""

    engine: EnumProperty(
        name="Engine", description="Render engine to use", items=ENGINE_ITEMS, default="EEVEE"
    )
    file_format: EnumProperty(
        name="Format",
        description="Write a video file or a folder of images",
        items=FORMAT_ITEMS,
        default="MP4",
    )
    filepath: StringProperty(
        name="Output",
        description="Video file (MP4) or folder (PNG frames); // means next to the .blend",
        default="//procanim_render.mp4",
        subtype="FILE_PATH",
        options=paths.BLEND_RELATIVE,
    )
    resolution_x: IntProperty(
        name="Width", description="Image width in pixels", default=1280, min=16, max=8192
    )
    resolution_y: IntProperty(
        name="Height", description="Image height in pixels", default=720, min=16, max=8192
    )
    samples: IntProperty(
        name="Samples", description="Samples per pixel for Cycles and EEVEE", default=32, min=1, max=4096
    )


class PROCANIM_OT_export_render(RenderOptions, ProcAnimOperator, bpy.types.Operator):
    """Render the scene's animation to an MP4 video or PNG frames"""

    bl_idname = "procanim.export_render"
    bl_label = "Export Render"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.scene is None or context.scene.camera is None:
            cls.poll_message_set("The scene needs an active camera")
            return False
        return True

    def _configure(self, context: bpy.types.Context) -> str:
        engine, width, height = self.engine, self.resolution_x, self.resolution_y
        # Left unset (a script, the CLI, the menus), they come from the extension's preferences.
        prefs = preferences(context)
        if prefs is not None:
            if not self.properties.is_property_set("engine"):
                engine = prefs.render_engine
            if not self.properties.is_property_set("resolution_x"):
                width = prefs.resolution_x
            if not self.properties.is_property_set("resolution_y"):
                height = prefs.resolution_y
        return configure_render(
            context.scene, self.filepath, engine, (width, height), self.file_format, self.samples
        )

    def run(self, context: bpy.types.Context) -> set[str]:
        path = self._configure(context)
        bpy.ops.render.render(animation=True)
        self.report(
            {"INFO"}, f"Rendered frames {context.scene.frame_start}-{context.scene.frame_end} to {path}"
        )
        return {"FINISHED"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if bpy.app.background:
            return self.execute(context)
        try:
            path = self._configure(context)
        except ProcAnimError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        # Blender's own render job shows progress in the status bar and stops on ESC.
        bpy.ops.render.render("INVOKE_DEFAULT", animation=True)
        self.report({"INFO"}, f"Rendering to {path}")
        return {"FINISHED"}


classes = (PROCANIM_OT_export_render,)


def add_cli(subparsers) -> None:
    from .cli import COMMON

    parser = subparsers.add_parser(
        "render",
        parents=[COMMON],
        help="open a .blend and render its animation (use with --render)",
        description="Open a .blend file and render its animation with the common --render options.",
    )
    parser.add_argument("blend", type=Path, help="the .blend file to open")
    parser.set_defaults(run=_cli_render)


def _cli_render(args, context) -> None:
    from .cli import CliError

    if not args.blend.is_file():
        raise CliError(f"no such .blend file: {args.blend}")
    if args.render is None:
        raise CliError("render needs --render OUTPUT")
    bpy.ops.wm.open_mainfile(filepath=str(args.blend))

"""Two warehouses reserve stock for one order, concurrently, in the same superstep.

``build_racy()`` keeps the remaining stock in shared workflow state and has each
warehouse read-modify-write it: Agent Framework's state is last-writer-wins
within a superstep, so one reservation silently overwrites the other (and which
one depends on the order the runtime happened to run them in).
``build_fixed()`` has each warehouse report its reservation and lets the
fan-in step do the one write.
"""

from __future__ import annotations

import asyncio
from typing import Never

from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, handler

STOCK = 10


class Order(Executor):
    @handler
    async def order(self, quantity: int, ctx: WorkflowContext[int]) -> None:
        ctx.set_state("stock", STOCK)
        await ctx.send_message(quantity)


def share(warehouse: str, quantity: int) -> int:
    """North ships half the order (rounded down), south the rest."""
    return quantity // 2 if warehouse == "north" else quantity - quantity // 2


class RacyWarehouse(Executor):
    @handler
    async def reserve(self, quantity: int, ctx: WorkflowContext[str]) -> None:
        mine = share(self.id, quantity)
        stock = ctx.get_state("stock")
        await asyncio.sleep(0.05)  # check the shelf (I/O): the sibling runs meanwhile
        ctx.set_state("stock", stock - mine)  # last writer wins at the superstep's end
        await ctx.send_message(f"{self.id} reserved {mine}")


class Warehouse(Executor):
    @handler
    async def reserve(self, quantity: int, ctx: WorkflowContext[str]) -> None:
        mine = share(self.id, quantity)
        await asyncio.sleep(0.05)  # check the shelf (I/O)
        await ctx.send_message(f"{self.id} reserved {mine}")


class Settle(Executor):
    def __init__(self, id: str, *, writes: bool) -> None:
        super().__init__(id=id)
        self.writes = writes

    @handler
    async def settle(self, reports: list[str], ctx: WorkflowContext[Never, str]) -> None:
        if self.writes:
            reserved = sum(int(report.rsplit(" ", 1)[1]) for report in reports)
            ctx.set_state("stock", ctx.get_state("stock") - reserved)
        await ctx.yield_output(f"stock left: {ctx.get_state('stock')}")


def _build(name: str, warehouse: type[Executor], *, settle_writes: bool) -> Workflow:
    order = Order(id="order")
    north, south = warehouse(id="north"), warehouse(id="south")
    settle = Settle(id="settle", writes=settle_writes)
    return (
        WorkflowBuilder(start_executor=order, name=name)
        .add_fan_out_edges(order, [north, south])
        .add_fan_in_edges([north, south], settle)
        .build()
    )


def build_racy() -> Workflow:
    return _build("inventory-racy", RacyWarehouse, settle_writes=False)


def build_fixed() -> Workflow:
    return _build("inventory", Warehouse, settle_writes=True)

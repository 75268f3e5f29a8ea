"""Dynamic models as programs of intermediate variables.

Each algorithm is one module and one public function returning a
:class:`~kanerobot.symbolic.Program` whose inputs are the robot's joint
variables ``q``, velocities ``QP``, accelerations ``QDP`` (torques ``GAM`` for
the direct model) and its parameters:

- :mod:`~kanerobot.dynamics.newton_euler`: inverse dynamic model by Khalil's
  customized recursive Newton-Euler (outputs ``GAM<label>``), and its
  specialisations H (centrifugal, Coriolis, gravity, friction) and Q (gravity);
- :mod:`~kanerobot.dynamics.composite`: inertia matrix by composite links
  (outputs ``A<i><j>``);
- :mod:`~kanerobot.dynamics.coriolis`: Coriolis matrix in Christoffel form;
- :mod:`~kanerobot.dynamics.direct`: recursive direct dynamic model (outputs
  ``QDP<label>``);
- :mod:`~kanerobot.dynamics.model`: :func:`derive`, which gathers them and
  chooses the model of the robot's structure (its ``STRUCTURES`` table);
- :mod:`~kanerobot.dynamics.dynamic_model`: the model class every structure
  shares and the numeric functions built from generated code;
- :mod:`~kanerobot.dynamics.free_flyer`: the floating base's symbols and
  checks, shared by the floating-base engines.
"""
